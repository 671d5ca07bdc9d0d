package helmtest

import (
	"context"
	"errors"
	"fmt"
	"net"
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

// TestRenderedSidecarRunsAndReloadsPolicyFromConfigMapUpdate runs the real
// kproxy on the sidecar ConfigMap the chart renders, in front of a kfake
// cluster, with the file laid out as kubelet mounts a ConfigMap (the key a
// symlink through ..data to a timestamped directory). A `helm upgrade`
// that changes only the policy is then applied the way kubelet applies
// it, by swapping ..data atomically: kproxy must reload the policy from
// it, without a restart and without a restart warning, and the client's
// next produce must see the new policy.
func TestRenderedSidecarRunsAndReloadsPolicyFromConfigMapUpdate(t *testing.T) {
	bin := testkit.BuildKproxy(t)
	const topic = "orders"
	cluster := testkit.Cluster(t, 3, kfake.SeedTopics(3, topic))
	bootstrap, base, admin := freePort(t), freePortRun(t, 3), freePort(t)
	values := func(policyDefault string) string {
		return fmt.Sprintf(`
mode: sidecar
upstream: {bootstrapServers: [%q]}
ports: {bootstrap: %d, brokerPortBase: %d, admin: %d}
brokers: {nodeIds: [0, 1, 2]}
policy: {default: %s}
`, cluster.ListenAddrs()[0], bootstrap, base, admin, policyDefault)
	}
	configMap := func(v string) string {
		objs := render(t, v)
		return objs.configMaps[fullname].Data["kproxy.yaml"]
	}

	mount := newConfigMapMount(t, map[string]string{"kproxy.yaml": configMap(values("allow"))})
	kp := testkit.RunBinary(t, bin, filepath.Join(mount.dir, "kproxy.yaml"))
	if want := fmt.Sprintf("127.0.0.1:%d", bootstrap); kp.Bootstrap != want {
		t.Fatalf("kproxy bootstrap listener %s, want %s from the rendered ports", kp.Bootstrap, want)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(kp.Bootstrap), kgo.RequestRetries(0), kgo.ProducerLinger(0))
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

	mount.update(t, map[string]string{"kproxy.yaml": configMap(values("deny"))})
	l := kp.WaitLog("the policy reload", func(l testkit.LogLine) bool {
		if strings.Contains(l.Message(), "only after a restart") {
			t.Errorf("a policy-only upgrade logged %q for section %v", l.Message(), l["section"])
		}
		return strings.HasPrefix(l.Message(), "policy reloaded") || strings.Contains(l.Message(), "reload rejected")
	})
	if !strings.HasPrefix(l.Message(), "policy reloaded") || l["trigger"] != "file change" {
		t.Fatalf("reload log line %v, want a policy reloaded on the file change", l)
	}
	if err := produce(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce after the policy changed to default deny: %v, want TOPIC_AUTHORIZATION_FAILED", err)
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

// freePort is a TCP port free on 127.0.0.1 a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	return freePortRun(t, 1)
}

// freePortRun finds n consecutive ports free on 127.0.0.1 (a broker port
// map: base, base+1, ...) and returns the first.
func freePortRun(t *testing.T, n int) int {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := ln.Addr().(*net.TCPAddr).Port
		held := []net.Listener{ln}
		for i := 1; i < n; i++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+i))
			if err != nil {
				break
			}
			held = append(held, l)
		}
		for _, l := range held {
			l.Close()
		}
		if len(held) == n {
			return base
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0
}
