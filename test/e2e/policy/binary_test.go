package e2epolicy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

const binaryBase = `
upstream: {embedded: {brokers: 1, topics: [t], default_partitions: 1}}
listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0}
admin: {listen: "127.0.0.1:0"}
log: {level: info, format: json}
audit: {output: AUDIT}
`

// TestBinaryReloadsPolicy runs the real kproxy binary with a policy, and
// changes the policy under a connected client: by editing the file, with a
// broken file (rejected, counted, old policy kept) and with SIGHUP.
func TestBinaryReloadsPolicy(t *testing.T) {
	bin := testkit.KproxyBinary(t)
	dir := t.TempDir()
	auditPath := filepath.Join(dir, "audit.log")
	cfgPath := filepath.Join(dir, "kproxy.yaml")
	write := func(policy string) {
		t.Helper()
		body := strings.Replace(binaryBase, "AUDIT", auditPath, 1) + policy
		if err := os.WriteFile(cfgPath, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(reloadDeny)

	kp := testkit.RunBinary(t, bin, cfgPath)
	bootstrap, admin := kp.Bootstrap, kp.Admin
	kp.WaitReady()
	waitLog, msgIs := kp.WaitLog, testkit.MessagePrefix

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Not idempotent: under the first policy the principal may write no
	// topic, so InitProducerId would be refused (CLUSTER_AUTHORIZATION_FAILED,
	// as from Kafka) and kgo treats that as fatal for the client.
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic("t"), kgo.ClientID("binary-test"), kgo.DisableIdempotentWrite(),
		kgo.RecordRetries(1), kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func() error { return cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr() }

	if err := produce(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("before reload: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	write(reloadAllow)
	m := waitLog("reload on file change", msgIs("policy reloaded"))
	if m["trigger"] != "file change" {
		t.Errorf("reload trigger %v", m["trigger"])
	}
	if err := produce(); err != nil {
		t.Fatalf("after the file changed, the same client: %v", err)
	}

	write(strings.Replace(reloadAllow, "allow: [write]", "allow: [wrte]", 1))
	m = waitLog("rejected reload", msgIs("configuration reload rejected"))
	if e, _ := m["error"].(string); !strings.Contains(e, `"wrte" is not an operation`) {
		t.Errorf("rejection log does not name the problem: %v", m)
	}
	if err := produce(); err != nil {
		t.Fatalf("after a broken file the old policy must stay: %v", err)
	}
	if _, metrics := testkit.HTTPGet(t, "http://"+admin+"/metrics"); !strings.Contains(metrics, `kproxy_policy_reloads_total{result="failure"} 1`) {
		t.Errorf("/metrics lacks the reload failure:\n%s", grepLines(metrics, "kproxy_policy"))
	}

	// SIGHUP re-reads the file: make it valid and deny again, then wait for
	// the file watcher's reload before signalling, so the SIGHUP reload is
	// the one observed.
	write(reloadDeny)
	waitLog("reload on file change", msgIs("policy reloaded"))
	kp.Cmd.Process.Signal(syscall.SIGHUP)
	m = waitLog("reload on SIGHUP", msgIs("policy reloaded"))
	if m["trigger"] != "sighup" {
		t.Errorf("reload trigger %v, want sighup", m["trigger"])
	}
	if err := produce(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("after reloading the deny policy: %v", err)
	}

	if _, err := kp.Stop(); err != nil {
		t.Errorf("kproxy exited with %v", err)
	}
	audit, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(audit), `"client_id":"binary-test"`) || !strings.Contains(string(audit), `"decision":"deny"`) {
		t.Errorf("audit file lacks the denials:\n%s", audit)
	}
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
