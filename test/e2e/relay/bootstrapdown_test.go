package e2e

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestBootstrapRefusedWhileClusterUnreachable runs the real binary in
// front of a bootstrap server nobody listens on. Its bootstrap port must
// refuse connections, as a dead cluster's port does, rather than accept
// them and drop each at its first request (librdkafka then blames its own
// security.protocol). Once a cluster answers on that address, the port
// accepts again within the longest reconnect backoff and a client produces
// through it.
func TestBootstrapRefusedWhileClusterUnreachable(t *testing.T) {
	bin := testkit.KproxyBinary(t)
	t.Parallel()
	const maxBackoff = time.Second
	upstreamPort := testkit.FreePort(t)
	upstream := fmt.Sprintf("127.0.0.1:%d", upstreamPort)
	cfg := testkit.Config{Upstream: []string{upstream}, DialTimeout: 2 * time.Second, UpstreamKeys: "reconnect_backoff_max: " + maxBackoff.String(),
		Admin: true, Log: "{level: info, format: json}"}.YAML()
	kp := testkit.RunBinary(t, bin, testkit.WriteConfig(t, cfg))

	// kproxy learns the server is down from its first dial (a probe at
	// start); from then on every connect is refused.
	var last error
	for deadline := time.Now().Add(10 * time.Second); !errors.Is(last, syscall.ECONNREFUSED); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("bootstrap port %s, upstream %s unreachable for 10s: want connection refused, got %v", kp.Bootstrap, upstream, last)
		}
		last = bootstrapAttempt(kp.Bootstrap)
	}
	for i := range 5 {
		if err := bootstrapAttempt(kp.Bootstrap); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("connect %d to the bootstrap port while the cluster is unreachable: %v, want connection refused", i+1, err)
		}
	}
	if v := testkit.ScrapeMetric(t, kp.Admin, "kproxy_bootstrap_listener_open"); v != 0 {
		t.Errorf("kproxy_bootstrap_listener_open = %v while refusing, want 0", v)
	}
	checkKcatBlamesNoSecurityProtocol(t, kp.Bootstrap)

	// The cluster comes up on the configured address.
	testkit.Cluster(t, 1, kfake.Ports(upstreamPort), kfake.AllowAutoTopicCreation())
	back := time.Now()
	for errors.Is(bootstrapAttempt(kp.Bootstrap), syscall.ECONNREFUSED) {
		if time.Since(back) > 10*time.Second {
			t.Fatalf("cluster up on %s for 10s, the bootstrap port still refuses", upstream)
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(back)
	t.Logf("bootstrap port accepting %s after the cluster came up", took.Round(time.Millisecond))
	if limit := maxBackoff*12/10 + time.Second; took > limit { // + slack for a loaded machine
		t.Errorf("bootstrap port accepted again after %s, want within the longest backoff (%s)", took, limit)
	}
	kp.WaitLog("the bootstrap listener accepting again", func(l testkit.LogLine) bool {
		return strings.HasPrefix(l.Message(), "bootstrap listener accepting again") && l["addr"] == kp.Bootstrap
	})
	ctx := testkit.Context(t, 30*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kp.Bootstrap), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "after-outage", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce through kproxy once the cluster is up: %v", err)
	}
	if v := testkit.ScrapeMetric(t, kp.Admin, "kproxy_bootstrap_listener_open"); v != 1 {
		t.Errorf("kproxy_bootstrap_listener_open = %v once accepting again, want 1", v)
	}
}

// bootstrapAttempt connects to addr and sends ApiVersions: nil if kproxy
// answers, else the error a client sees (connection refused, or EOF when
// the connection is accepted and dropped).
func bootstrapAttempt(addr string) error {
	_, err := apiVersionsAt(addr)
	return err
}

// checkKcatBlamesNoSecurityProtocol runs kcat, where installed, against
// the refusing bootstrap port: its log must say the connection was refused,
// not suggest a security.protocol mismatch.
func checkKcatBlamesNoSecurityProtocol(t *testing.T, addr string) {
	t.Helper()
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Log("kcat not installed: its log is not checked")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, kcat, "-b", addr, "-L", "-m", "2").CombinedOutput()
	if strings.Contains(string(out), "security.protocol") {
		t.Errorf("kcat against the refusing bootstrap port still suggests security.protocol:\n%s", out)
	}
	if !strings.Contains(strings.ToLower(string(out)), "refused") {
		t.Errorf("kcat's log does not say the connection was refused:\n%s", out)
	}
}
