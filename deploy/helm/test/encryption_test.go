package helmtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kproxy/kproxy/internal/testkit"
)

// encryptionValues is an encryption section towards a KMS on loopback:
// kproxy builds its client at start but calls the KMS only for records of
// the matching topics, which these tests do not produce.
const encryptionValues = `
encryption:
  kms: {aws_kms: {endpoint: "http://127.0.0.1:4599", region: eu-west-1}}
  topics:
    - {match: "payments.*", key: "alias/kek-$(topic)", encrypt: [value, headers]}
  dek: {max_age: 1h, max_records: 5000000}
  on_missing_key: reject
`

// TestEncryptionChecksumAgreesWithKproxyReload: for each upgrade of the
// encryption section, the pods' checksum/config annotation changes
// (rolling them) exactly when the running kproxy, reloading the upgraded
// ConfigMap, says the change needs a restart: topics and on_missing_key
// reload, kms and dek need a restart.
func TestEncryptionChecksumAgreesWithKproxyReload(t *testing.T) {
	base := "policy: {default: allow}\n" + encryptionValues
	s := startRenderedSidecar(t, "t", base)
	baseSum, baseFile := s.render(t, base)
	for _, tc := range []struct {
		name, values string
		restart      string // the section kproxy names, "" for none
	}{
		{"topic key", `encryption: {topics: [{match: "payments.*", key: "alias/kek2-$(topic)"}]}`, ""},
		{"topic rules", `encryption: {topics: [{match: "payments.*", key: "alias/kek-$(topic)"}, {match: "orders", key: "alias/orders"}]}`, ""},
		{"on_missing_key", "encryption: {on_missing_key: passthrough}", ""},
		{"kms endpoint", `encryption: {kms: {aws_kms: {endpoint: "http://127.0.0.1:4600"}}}`, "encryption.kms"},
		{"dek bounds", "encryption: {dek: {max_age: 10m}}", "encryption.dek"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum, file := s.render(t, base, tc.values)
			if file == baseFile {
				t.Fatalf("values %q did not change kproxy.yaml", tc.values)
			}
			rolls := sum != baseSum
			sections := s.upgradeEncryption(t, base, tc.values)
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

// upgradeEncryption is upgrade for a configuration with an encryption
// section: it waits for kproxy's reload of that section, which it logs
// after the policy's, and returns the sections kproxy says need a restart.
func (s *renderedSidecar) upgradeEncryption(t *testing.T, layers ...string) (restartSections []string) {
	t.Helper()
	return s.upgradeSection(t, "encryption", layers...)
}

// upgradeSection is upgrade for a configuration with a filter's section
// (encryption, large_messages): it waits for kproxy's reload of that
// section and returns the sections kproxy says need a restart.
func (s *renderedSidecar) upgradeSection(t *testing.T, section string, layers ...string) (restartSections []string) {
	t.Helper()
	_, file := s.render(t, layers...)
	s.mount.update(t, map[string]string{"kproxy.yaml": file})
	for {
		l := s.kp.WaitLog("the "+section+" section's reload", func(l testkit.LogLine) bool {
			return strings.Contains(l.Message(), "only after a restart") || strings.Contains(l.Message(), "rejected") ||
				l.Message() == "section reloaded" && l["section"] == section
		})
		switch {
		case strings.Contains(l.Message(), "only after a restart"):
			section, _ := l["section"].(string)
			restartSections = append(restartSections, section)
		case l.Message() == "section reloaded":
			return restartSections
		default:
			t.Fatalf("kproxy did not reload the upgraded ConfigMap: %v", l)
		}
	}
}

// virtualClusterEncryption is two virtual clusters, one with its own
// encryption section and policy.
const virtualClusterEncryption = `
virtualClusters:
  - name: team-a
    topic_prefix: "a."
    group_prefix: "a."
    transactional_id_prefix: "a."
    listeners: {bootstrap_port: 19092, broker_port_base: 19100}
    policy: {default: allow}
    encryption:
      kms: {aws_kms: {endpoint: "https://kms.eu-west-1.amazonaws.com", region: eu-west-1}}
      topics: [{match: "payments.*", key: "alias/$(virtual_cluster)/$(topic)"}]
  - name: team-b
    topic_prefix: "b."
    group_prefix: "b."
    transactional_id_prefix: "b."
    listeners: {bootstrap_port: 29092, broker_port_base: 29100}
`

// TestVirtualClusterEncryptionRestartKeys: a virtual cluster's encryption
// topics, on_missing_key and policy, which kproxy reloads, keep the
// gateway's checksum; its kms, and an encryption section added to a
// virtual cluster, change it. Every render is a file kproxy accepts.
func TestVirtualClusterEncryptionRestartKeys(t *testing.T) {
	bin := testkit.BuildKproxy(t)
	checksum := func(layers ...string) string {
		objs := render(t, append([]string{upstreamValues, virtualClusterEncryption}, layers...)...)
		validateRendered(t, bin, objs)
		return mustGet(t, objs.deployments, fullname).Spec.Template.Annotations["checksum/config"]
	}
	base := checksum()
	vc := func(a, b string) string {
		return fmt.Sprintf(`
virtualClusters:
  - name: team-a
    topic_prefix: "a."
    group_prefix: "a."
    transactional_id_prefix: "a."
    listeners: {bootstrap_port: 19092, broker_port_base: 19100}
    %s
  - name: team-b
    topic_prefix: "b."
    group_prefix: "b."
    transactional_id_prefix: "b."
    listeners: {bootstrap_port: 29092, broker_port_base: 29100}
    %s
`, a, b)
	}
	kms := `kms: {aws_kms: {endpoint: "https://kms.eu-west-1.amazonaws.com", region: eu-west-1}}`
	for _, tc := range []struct {
		name, values string
		rolls        bool
	}{
		{"topics", vc(`encryption: {`+kms+`, topics: [{match: "re:.*", key: "alias/$(virtual_cluster)/all"}]}
    policy: {default: allow}`, ""), false},
		{"on_missing_key", vc(`encryption: {`+kms+`, topics: [{match: "payments.*", key: "alias/$(virtual_cluster)/$(topic)"}], on_missing_key: passthrough}
    policy: {default: allow}`, ""), false},
		{"policy", vc(`encryption: {`+kms+`, topics: [{match: "payments.*", key: "alias/$(virtual_cluster)/$(topic)"}]}
    policy: {default: deny}`, ""), false},
		{"kms", vc(`encryption: {kms: {aws_kms: {region: eu-central-1}}, topics: [{match: "payments.*", key: "alias/$(virtual_cluster)/$(topic)"}]}
    policy: {default: allow}`, ""), true},
		{"section added", vc(`encryption: {`+kms+`, topics: [{match: "payments.*", key: "alias/$(virtual_cluster)/$(topic)"}]}
    policy: {default: allow}`, `encryption: {`+kms+`, topics: [{match: "x", key: "alias/$(virtual_cluster)/x"}]}`), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if rolls := checksum(tc.values) != base; rolls != tc.rolls {
				t.Errorf("changing team-a's %s: pods roll %v, want %v", tc.name, rolls, tc.rolls)
			}
		})
	}
}

// validateRendered runs `kproxy validate` on the rendered kproxy.yaml.
func validateRendered(t *testing.T, bin string, objs *objects) {
	t.Helper()
	text := objs.kproxyYAML(t)
	path := filepath.Join(t.TempDir(), "kproxy.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "validate", "--skip-file-checks", "--config", path).CombinedOutput(); err != nil {
		t.Fatalf("kproxy validate on the rendered config: %v\n%s\n---\n%s", err, out, text)
	}
}

// kproxyPod renders the chart over upstreamValues in mode (gateway, or
// sidecar with its example application) and returns the pod spec and the
// kproxy container of the gateway's Deployment or the example's.
func kproxyPod(t *testing.T, mode string, layers ...string) (corev1.PodSpec, corev1.Container) {
	t.Helper()
	objs := render(t, append([]string{upstreamValues, "mode: " + mode + "\nsidecar: {example: {enabled: true}}\n"}, layers...)...)
	name := fullname
	if mode == "sidecar" {
		name += "-example"
	}
	spec := mustGet(t, objs.deployments, name).Spec.Template.Spec
	for _, c := range append(spec.InitContainers, spec.Containers...) {
		if c.Name == "kproxy" {
			return spec, c
		}
	}
	t.Fatalf("%s: no kproxy container", name)
	return spec, corev1.Container{}
}

// checkEnvCredentials fails unless kp takes AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY from keys id and secret of Secret name, the
// optional AWS_SESSION_TOKEN from its key AWS_SESSION_TOKEN, and has no
// shared credentials file.
func checkEnvCredentials(t *testing.T, kp corev1.Container, name string) {
	t.Helper()
	want := map[string]corev1.SecretKeySelector{
		"AWS_ACCESS_KEY_ID":     {LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "id"},
		"AWS_SECRET_ACCESS_KEY": {LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "secret"},
		"AWS_SESSION_TOKEN":     {LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "AWS_SESSION_TOKEN", Optional: ptr(true)},
	}
	got := envSecretRefs(kp)
	for env, ref := range want {
		g, ok := got[env]
		if !ok || g.Name != ref.Name || g.Key != ref.Key || (ref.Optional == nil) != (g.Optional == nil) ||
			ref.Optional != nil && *g.Optional != *ref.Optional {
			t.Errorf("env %s = %+v, want from Secret %+v", env, g, ref)
		}
	}
	if v := envValue(kp, "AWS_SHARED_CREDENTIALS_FILE"); v != "" {
		t.Errorf("AWS_SHARED_CREDENTIALS_FILE=%q without fileSecret", v)
	}
}

// checkFileCredentials fails unless the pod mounts key creds of Secret
// name, alone and read-only, as volume aws-credentials, and kp's
// AWS_SHARED_CREDENTIALS_FILE names the mounted file and AWS_PROFILE is
// kproxy.
func checkFileCredentials(t *testing.T, spec corev1.PodSpec, kp corev1.Container, name string) {
	t.Helper()
	file := envValue(kp, "AWS_SHARED_CREDENTIALS_FILE")
	if file == "" || envValue(kp, "AWS_PROFILE") != "kproxy" {
		t.Fatalf("env %+v: want AWS_SHARED_CREDENTIALS_FILE and AWS_PROFILE=kproxy", kp.Env)
	}
	var mountDir string
	for _, m := range kp.VolumeMounts {
		if m.Name == "aws-credentials" {
			mountDir = m.MountPath
			if !m.ReadOnly {
				t.Errorf("the credentials are mounted writable")
			}
		}
	}
	if mountDir == "" || file != mountDir+"/creds" {
		t.Errorf("AWS_SHARED_CREDENTIALS_FILE=%q, the Secret is mounted at %q: want the file's key under it", file, mountDir)
	}
	var vol *corev1.Volume
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == "aws-credentials" {
			vol = &spec.Volumes[i]
		}
	}
	if vol == nil || vol.Secret == nil || vol.Secret.SecretName != name || len(vol.Secret.Items) != 1 || vol.Secret.Items[0].Key != "creds" {
		t.Errorf("volume aws-credentials %+v: want Secret %s's key creds alone", vol, name)
	}
	if v := envValue(kp, "AWS_ACCESS_KEY_ID"); v != "" || envSecretRefs(kp)["AWS_ACCESS_KEY_ID"].Name != "" {
		t.Errorf("AWS_ACCESS_KEY_ID set without envSecret")
	}
}

// TestAWSCredentialsFromSecret: awsCredentials hands the AWS SDK's chain
// (here encryption's KMS client) its environment variables from a Secret,
// or mounts a shared credentials file from one, in the gateway's pods and
// the sidecar's example pod; the pods run as serviceAccountName. Values
// naming both Secrets, or a Secret without its keys, are refused naming
// the key as written.
func TestAWSCredentialsFromSecret(t *testing.T) {
	for _, mode := range []string{"gateway", "sidecar"} {
		t.Run(mode+"/env", func(t *testing.T) {
			_, kp := kproxyPod(t, mode, encryptionValues, `awsCredentials: {envSecret: {name: kms-keys, accessKeyIdKey: id, secretAccessKeyKey: secret}}`)
			checkEnvCredentials(t, kp, "kms-keys")
		})
		t.Run(mode+"/file", func(t *testing.T) {
			spec, kp := kproxyPod(t, mode, encryptionValues, `awsCredentials: {fileSecret: {name: kms-file, key: creds, profile: kproxy}}
serviceAccountName: kproxy-kms`)
			checkFileCredentials(t, spec, kp, "kms-file")
			if spec.ServiceAccountName != "kproxy-kms" {
				t.Errorf("serviceAccountName %q, want kproxy-kms", spec.ServiceAccountName)
			}
		})
		t.Run(mode+"/none", func(t *testing.T) {
			spec, kp := kproxyPod(t, mode, encryptionValues)
			for _, e := range kp.Env {
				if strings.HasPrefix(e.Name, "AWS_") {
					t.Errorf("env %s without awsCredentials", e.Name)
				}
			}
			for _, v := range spec.Volumes {
				if v.Name == "aws-credentials" {
					t.Errorf("volume aws-credentials without awsCredentials")
				}
			}
			if spec.ServiceAccountName != "" {
				t.Errorf("serviceAccountName %q without the value", spec.ServiceAccountName)
			}
		})
	}
	for _, tc := range []struct {
		values string
		want   []string
	}{
		{`awsCredentials: {envSecret: {name: a}, fileSecret: {name: b}}`, []string{"awsCredentials:", "not both"}},
		{`awsCredentials: {envSecret: {name: a, accessKeyIdKey: ""}}`, []string{"awsCredentials.envSecret:", "accessKeyIdKey"}},
		{`awsCredentials: {fileSecret: {name: b, key: ""}}`, []string{"awsCredentials.fileSecret.key"}},
		// The former name's mistakes are named as written.
		{`kmsCredentials: {envSecret: {name: a}, fileSecret: {name: b}}`, []string{"kmsCredentials:", "not both"}},
		{`kmsCredentials: {envSecret: {name: a, secretAccessKeyKey: ""}}`, []string{"kmsCredentials.envSecret:", "secretAccessKeyKey"}},
		{`kmsCredentials: {fileSecret: {name: b, key: ""}}`, []string{"kmsCredentials.fileSecret.key"}},
	} {
		_, err := renderValues(t, upstreamValues, encryptionValues, tc.values)
		for _, want := range tc.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("values %s: render error %v, want one naming %q", tc.values, err, want)
			}
		}
	}
}

// TestKMSCredentialsAlias: kmsCredentials, awsCredentials' former name,
// alone renders every object exactly as awsCredentials with the same
// value does (its defaults included), in both modes; naming a Secret in
// both is refused, naming both keys.
func TestKMSCredentialsAlias(t *testing.T) {
	for _, mode := range []string{"gateway", "sidecar"} {
		for _, tc := range []struct {
			name, value string
			check       func(*testing.T, corev1.PodSpec, corev1.Container)
		}{
			{"env", `{envSecret: {name: kms-keys, accessKeyIdKey: id, secretAccessKeyKey: secret}}`, func(t *testing.T, _ corev1.PodSpec, kp corev1.Container) {
				checkEnvCredentials(t, kp, "kms-keys")
			}},
			{"env-defaults-no-token", `{envSecret: {name: kms-keys, sessionTokenKey: ""}}`, func(t *testing.T, _ corev1.PodSpec, kp corev1.Container) {
				refs := envSecretRefs(kp)
				if refs["AWS_ACCESS_KEY_ID"].Key != "AWS_ACCESS_KEY_ID" || refs["AWS_SECRET_ACCESS_KEY"].Key != "AWS_SECRET_ACCESS_KEY" {
					t.Errorf("env %+v: want the access key from the Secret's default keys", kp.Env)
				}
				if _, ok := refs["AWS_SESSION_TOKEN"]; ok {
					t.Errorf("AWS_SESSION_TOKEN with sessionTokenKey empty")
				}
			}},
			{"file", `{fileSecret: {name: kms-file, key: creds, profile: kproxy}}`, func(t *testing.T, spec corev1.PodSpec, kp corev1.Container) {
				checkFileCredentials(t, spec, kp, "kms-file")
			}},
		} {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				modeValues := "mode: " + mode + "\nsidecar: {example: {enabled: true}}\n"
				aws, err := renderValues(t, upstreamValues, encryptionValues, modeValues, "awsCredentials: "+tc.value)
				if err != nil {
					t.Fatalf("awsCredentials: %v", err)
				}
				kms, err := renderValues(t, upstreamValues, encryptionValues, modeValues, "kmsCredentials: "+tc.value)
				if err != nil {
					t.Fatalf("kmsCredentials: %v", err)
				}
				for name, text := range aws {
					if kms[name] != text {
						t.Errorf("%s with kmsCredentials:\n%s\nwith awsCredentials:\n%s", name, kms[name], text)
					}
				}
				for name := range kms {
					if _, ok := aws[name]; !ok {
						t.Errorf("%s rendered with kmsCredentials alone", name)
					}
				}
				spec, kp := kproxyPod(t, mode, encryptionValues, "kmsCredentials: "+tc.value)
				tc.check(t, spec, kp)
			})
		}
	}
	for _, values := range []string{
		"awsCredentials: {envSecret: {name: a}}\nkmsCredentials: {envSecret: {name: a}}",
		"awsCredentials: {fileSecret: {name: a}}\nkmsCredentials: {envSecret: {name: b}}",
		"awsCredentials: {envSecret: {name: a}}\nkmsCredentials: {fileSecret: {name: b}}",
	} {
		_, err := renderValues(t, upstreamValues, encryptionValues, values)
		if err == nil || !strings.Contains(err.Error(), "awsCredentials") || !strings.Contains(err.Error(), "kmsCredentials") ||
			!strings.Contains(err.Error(), "not both") {
			t.Errorf("values %q: render error %v, want the chart's naming awsCredentials and kmsCredentials, not both", values, err)
		}
	}
}

func envSecretRefs(c corev1.Container) map[string]corev1.SecretKeySelector {
	out := map[string]corev1.SecretKeySelector{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			out[e.Name] = *e.ValueFrom.SecretKeyRef
		}
	}
	return out
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func ptr[T any](v T) *T { return &v }
