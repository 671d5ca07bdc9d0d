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

// TestKMSCredentialsFromSecret: kmsCredentials hands the AWS SDK's chain
// its environment variables from a Secret, or mounts a shared credentials
// file from one, in the gateway's pods and the sidecar's example pod; the
// pods run as serviceAccountName.
func TestKMSCredentialsFromSecret(t *testing.T) {
	for _, mode := range []string{"gateway", "sidecar"} {
		pod := func(t *testing.T, values string) (corev1.PodSpec, corev1.Container) {
			objs := render(t, upstreamValues, encryptionValues, "mode: "+mode+"\nsidecar: {example: {enabled: true}}\n", values)
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
		t.Run(mode+"/env", func(t *testing.T) {
			_, kp := pod(t, `kmsCredentials: {envSecret: {name: kms-keys, accessKeyIdKey: id, secretAccessKeyKey: secret}}`)
			want := map[string]corev1.SecretKeySelector{
				"AWS_ACCESS_KEY_ID":     {LocalObjectReference: corev1.LocalObjectReference{Name: "kms-keys"}, Key: "id"},
				"AWS_SECRET_ACCESS_KEY": {LocalObjectReference: corev1.LocalObjectReference{Name: "kms-keys"}, Key: "secret"},
				"AWS_SESSION_TOKEN":     {LocalObjectReference: corev1.LocalObjectReference{Name: "kms-keys"}, Key: "AWS_SESSION_TOKEN", Optional: ptr(true)},
			}
			got := envSecretRefs(kp)
			for name, ref := range want {
				g, ok := got[name]
				if !ok || g.Name != ref.Name || g.Key != ref.Key || (ref.Optional == nil) != (g.Optional == nil) ||
					ref.Optional != nil && *g.Optional != *ref.Optional {
					t.Errorf("env %s = %+v, want from Secret %+v", name, g, ref)
				}
			}
			if v := envValue(kp, "AWS_SHARED_CREDENTIALS_FILE"); v != "" {
				t.Errorf("AWS_SHARED_CREDENTIALS_FILE=%q without fileSecret", v)
			}
		})
		t.Run(mode+"/file", func(t *testing.T) {
			spec, kp := pod(t, `kmsCredentials: {fileSecret: {name: kms-file, key: creds, profile: kproxy}}
serviceAccountName: kproxy-kms`)
			file := envValue(kp, "AWS_SHARED_CREDENTIALS_FILE")
			if file == "" || envValue(kp, "AWS_PROFILE") != "kproxy" {
				t.Fatalf("env %+v: want AWS_SHARED_CREDENTIALS_FILE and AWS_PROFILE=kproxy", kp.Env)
			}
			var mountDir string
			for _, m := range kp.VolumeMounts {
				if m.Name == "kms-credentials" {
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
				if spec.Volumes[i].Name == "kms-credentials" {
					vol = &spec.Volumes[i]
				}
			}
			if vol == nil || vol.Secret == nil || vol.Secret.SecretName != "kms-file" || len(vol.Secret.Items) != 1 || vol.Secret.Items[0].Key != "creds" {
				t.Errorf("volume kms-credentials %+v: want Secret kms-file's key creds alone", vol)
			}
			if spec.ServiceAccountName != "kproxy-kms" {
				t.Errorf("serviceAccountName %q, want kproxy-kms", spec.ServiceAccountName)
			}
			if v := envValue(kp, "AWS_ACCESS_KEY_ID"); v != "" || envSecretRefs(kp)["AWS_ACCESS_KEY_ID"].Name != "" {
				t.Errorf("AWS_ACCESS_KEY_ID set without envSecret")
			}
		})
		t.Run(mode+"/none", func(t *testing.T) {
			spec, kp := pod(t, "")
			for _, e := range kp.Env {
				if strings.HasPrefix(e.Name, "AWS_") {
					t.Errorf("env %s without kmsCredentials", e.Name)
				}
			}
			if spec.ServiceAccountName != "" {
				t.Errorf("serviceAccountName %q without the value", spec.ServiceAccountName)
			}
		})
	}
	for _, tc := range []struct{ values, want string }{
		{`kmsCredentials: {envSecret: {name: a}, fileSecret: {name: b}}`, "not both"},
		{`kmsCredentials: {envSecret: {name: a, accessKeyIdKey: ""}}`, "accessKeyIdKey"},
		{`kmsCredentials: {fileSecret: {name: b, key: ""}}`, "kmsCredentials.fileSecret.key"},
	} {
		if _, err := renderValues(t, upstreamValues, encryptionValues, tc.values); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("values %s: render error %v, want one naming %q", tc.values, err, tc.want)
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
