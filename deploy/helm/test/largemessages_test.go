package helmtest

import (
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/testkit"
)

// largeMessagesValues is a large_messages section towards a store on
// loopback: kproxy builds its client at start but calls the store only
// for records of the matching topics, which these tests do not produce.
const largeMessagesValues = `
largeMessages:
  store:
    s3: {endpoint: "http://127.0.0.1:8333", bucket: kafka-large, region: eu-west-1, path_style: true}
  topics:
    - {match: "media.*", threshold_bytes: 1048576, header_trigger: LFS_BLOB}
  resolve_on_fetch: true
  max_object_bytes: 5368709120
`

// TestLargeMessagesChecksumAgreesWithKproxyReload: largeMessages renders
// as kproxy's large_messages section, and for each upgrade of it the
// pods' checksum/config annotation changes (rolling them) exactly when
// the running kproxy, reloading the upgraded ConfigMap, says the change
// needs a restart: topics and resolve_on_fetch reload, the store and
// max_object_bytes need a restart.
func TestLargeMessagesChecksumAgreesWithKproxyReload(t *testing.T) {
	base := "policy: {default: allow}\n" + largeMessagesValues
	s := startRenderedSidecar(t, "t", base)
	baseSum, baseFile := s.render(t, base)
	if !strings.Contains(baseFile, "large_messages:") || !strings.Contains(baseFile, "bucket: kafka-large") {
		t.Fatalf("largeMessages is not rendered as large_messages:\n%s", baseFile)
	}
	for _, tc := range []struct {
		name, values string
		restart      string // the section kproxy names, "" for none
	}{
		{"threshold", `largeMessages: {topics: [{match: "media.*", threshold_bytes: 2097152}]}`, ""},
		{"topic rules", `largeMessages: {topics: [{match: "media.*", threshold_bytes: 1048576}, {match: "scans", header_trigger: LFS_BLOB}]}`, ""},
		{"resolve_on_fetch", "largeMessages: {resolve_on_fetch: false}", ""},
		{"store endpoint", `largeMessages: {store: {s3: {endpoint: "http://127.0.0.1:8334"}}}`, "large_messages"},
		{"max_object_bytes", "largeMessages: {max_object_bytes: 1073741824}", "large_messages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum, file := s.render(t, base, tc.values)
			if file == baseFile {
				t.Fatalf("values %q did not change kproxy.yaml", tc.values)
			}
			rolls := sum != baseSum
			sections := s.upgradeSection(t, "large_messages", base, tc.values)
			wantRestart := tc.restart != ""
			if rolls != wantRestart {
				t.Errorf("values %q: pods roll %v, want %v", tc.values, rolls, wantRestart)
			}
			if got := strings.Join(sections, ","); got != tc.restart {
				t.Errorf("values %q: kproxy says %q needs a restart, want %q", tc.values, got, tc.restart)
			}
		})
	}
}

// TestLargeMessagesAWSCredentials: with large-message offload and no
// encryption, awsCredentials still reaches kproxy, whose S3 store reads
// the AWS SDK's chain: the environment variables from a Secret, or the
// shared credentials file mounted from one, in both modes; likewise when
// only a virtual cluster offloads.
func TestLargeMessagesAWSCredentials(t *testing.T) {
	const vcLargeMessages = `
virtualClusters:
  - name: team-a
    topic_prefix: "a."
    group_prefix: "a."
    transactional_id_prefix: "a."
    listeners: {bootstrap_port: 19092, broker_port_base: 19100}
    large_messages:
      store: {s3: {endpoint: "https://s3.eu-west-1.amazonaws.com", bucket: team-a-large, region: eu-west-1}}
      topics: [{match: "media.*"}]
`
	bin := testkit.BuildKproxy(t)
	for _, mode := range []string{"gateway", "sidecar"} {
		for name, section := range map[string]string{"top-level": largeMessagesValues, "virtual-cluster": vcLargeMessages} {
			if mode == "sidecar" && name == "virtual-cluster" {
				continue // virtual clusters are a gateway's
			}
			t.Run(mode+"/"+name, func(t *testing.T) {
				objs := render(t, upstreamValues, "mode: "+mode+"\n", section)
				text := objs.kproxyYAML(t)
				if !strings.Contains(text, "large_messages:") || strings.Contains(text, "encryption:") {
					t.Fatalf("want large_messages without encryption in kproxy.yaml:\n%s", text)
				}
				validateRendered(t, bin, objs)
				_, kp := kproxyPod(t, mode, section, `awsCredentials: {envSecret: {name: s3-keys, accessKeyIdKey: id, secretAccessKeyKey: secret}}`)
				checkEnvCredentials(t, kp, "s3-keys")
				spec, kp := kproxyPod(t, mode, section, `awsCredentials: {fileSecret: {name: s3-file, key: creds, profile: kproxy}}`)
				checkFileCredentials(t, spec, kp, "s3-file")
			})
		}
	}
}
