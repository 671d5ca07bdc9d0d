package helmtest

import (
	"strings"
	"testing"
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
