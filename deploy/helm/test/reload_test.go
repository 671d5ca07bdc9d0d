package helmtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

// renderedSidecar is the real kproxy running on the sidecar ConfigMap the
// chart renders, in front of a kfake cluster, with the file laid out as
// kubelet mounts a ConfigMap.
type renderedSidecar struct {
	bin   string // the kproxy binary kp runs
	kp    *testkit.Binary
	mount *configMapMount
	// base are the values of the running file: the sidecar's own ports
	// (free ones here) and the cluster.
	base string
}

func startRenderedSidecar(t *testing.T, topic string, layers ...string) *renderedSidecar {
	t.Helper()
	bin := testkit.BuildKproxy(t)
	cluster := testkit.Cluster(t, 3, kfake.SeedTopics(3, topic))
	// bootstrap, three brokers and admin from one run of free ports, so
	// that no two are handed the same one.
	ports := testkit.FreePortRun(t, "127.0.0.1", 5)
	s := &renderedSidecar{bin: bin, base: fmt.Sprintf(`
mode: sidecar
upstream: {bootstrapServers: [%q]}
ports: {bootstrap: %d, brokerPortBase: %d, admin: %d}
brokers: {nodeIds: [0, 1, 2]}
`, cluster.ListenAddrs()[0], ports, ports+1, ports+4)}
	_, file := s.render(t, layers...)
	s.mount = newConfigMapMount(t, map[string]string{"kproxy.yaml": file})
	s.kp = testkit.RunBinary(t, bin, filepath.Join(s.mount.dir, "kproxy.yaml"))
	return s
}

// render renders the sidecar with layers over its base values and returns
// the example pod's checksum annotation and the ConfigMap's kproxy.yaml.
func (s *renderedSidecar) render(t *testing.T, layers ...string) (checksum, file string) {
	t.Helper()
	objs := render(t, append([]string{s.base}, layers...)...)
	dep := mustGet(t, objs.deployments, fullname+"-example")
	return dep.Spec.Template.Annotations["checksum/config"], objs.kproxyYAML(t)
}

// upgrade applies what a `helm upgrade` to layers renders as kubelet
// does, waits for kproxy's reload of it and returns the sections kproxy
// says need a restart.
func (s *renderedSidecar) upgrade(t *testing.T, layers ...string) (restartSections []string) {
	t.Helper()
	_, file := s.render(t, layers...)
	s.mount.update(t, map[string]string{"kproxy.yaml": file})
	for {
		l := s.kp.WaitLog("the reload", func(l testkit.LogLine) bool {
			return strings.Contains(l.Message(), "only after a restart") || strings.HasPrefix(l.Message(), "policy reloaded") ||
				strings.Contains(l.Message(), "rejected")
		})
		switch {
		case strings.Contains(l.Message(), "only after a restart"):
			section, _ := l["section"].(string)
			restartSections = append(restartSections, section)
		case strings.HasPrefix(l.Message(), "policy reloaded") && l["trigger"] == "file change":
			return restartSections
		default:
			t.Fatalf("kproxy did not reload the upgraded ConfigMap: %v", l)
		}
	}
}

// TestRenderedSidecarReloadsPolicyFromConfigMapUpdate: the rendered
// sidecar relays a produce; a `helm upgrade` that changes only the
// policy, applied the way kubelet applies it (an atomic ..data swap), is
// reloaded without a restart or restart warning, and the client's next
// produce sees the new policy.
func TestRenderedSidecarReloadsPolicyFromConfigMapUpdate(t *testing.T) {
	const topic = "orders"
	s := startRenderedSidecar(t, topic, "policy: {default: allow}")
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.kp.Bootstrap), kgo.RequestRetries(0), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr()
	}
	if err := produce(); err != nil {
		t.Fatalf("produce through the rendered sidecar config (policy default allow): %v", err)
	}
	if restart := s.upgrade(t, "policy: {default: deny}"); len(restart) > 0 {
		t.Errorf("a policy-only upgrade: kproxy says sections %v need a restart", restart)
	}
	if err := produce(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce after the policy changed to default deny: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
}

// TestChecksumAgreesWithKproxyRestartSections: for each upgrade, the pods'
// checksum/config annotation changes (rolling them) exactly when the
// running kproxy, reloading the upgraded ConfigMap, says a section needs
// a restart: a policy or audit.log_allowed change keeps the pods, any
// other key rolls them.
func TestChecksumAgreesWithKproxyRestartSections(t *testing.T) {
	base := "policy: {default: allow}\naudit: {log_allowed: false}\n"
	s := startRenderedSidecar(t, "t", base)
	baseSum, baseFile := s.render(t, base)
	if baseSum == "" {
		t.Fatal("no checksum/config annotation on the pod template")
	}
	for _, tc := range []struct {
		name, values string
		restart      bool
	}{
		{"policy rules", `policy: {rules: [{name: r, principals: ["*"], allow: [Read], topics: ["*"]}]}`, false},
		{"policy mode", "policy: {mode: audit}", false},
		{"audit.log_allowed", "audit: {log_allowed: true}", false},
		{"log level", "log: {level: debug}", true},
		{"limits", "limits: {max_in_flight: 10}", true},
		{"audit output", "audit: {output: /dev/stderr}", true},
		{"broker port base", "ports: {brokerPortBase: 9200}", true},
		{"upstream", `upstream: {bootstrapServers: ["other:9092"]}`, true},
		{"listener tls", "listeners: {tls: {enabled: true, secretName: s}}", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum, file := s.render(t, base, tc.values)
			if file == baseFile {
				t.Fatalf("values %q did not change kproxy.yaml", tc.values)
			}
			rolls := sum != baseSum
			sections := s.upgrade(t, base, tc.values)
			if rolls != tc.restart || (len(sections) > 0) != tc.restart {
				t.Errorf("values %q: pods roll %v, kproxy says restart for %v; want restart %v", tc.values, rolls, sections, tc.restart)
			}
		})
	}
}

// configMapMount lays out files as kubelet's atomic writer mounts a
// ConfigMap volume: each key a symlink to ..data/KEY, ..data a symlink to
// a timestamped directory holding the files; an update writes a new
// directory and renames a new ..data symlink over the old one.
type configMapMount struct {
	dir string
	gen int
}

func newConfigMapMount(t *testing.T, files map[string]string) *configMapMount {
	m := &configMapMount{dir: t.TempDir()}
	m.update(t, files)
	for key := range files {
		if err := os.Symlink(filepath.Join("..data", key), filepath.Join(m.dir, key)); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func (m *configMapMount) update(t *testing.T, files map[string]string) {
	t.Helper()
	m.gen++
	stamp := fmt.Sprintf("..2026_12_01_00_00_%02d.%09d", m.gen, m.gen)
	if err := os.Mkdir(filepath.Join(m.dir, stamp), 0o755); err != nil {
		t.Fatal(err)
	}
	for key, text := range files {
		if err := os.WriteFile(filepath.Join(m.dir, stamp, key), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old, _ := os.Readlink(filepath.Join(m.dir, "..data"))
	tmp := filepath.Join(m.dir, "..data_tmp")
	if err := os.Symlink(stamp, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(m.dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if old != "" {
		os.RemoveAll(filepath.Join(m.dir, old))
	}
}
