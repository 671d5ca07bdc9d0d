package e2epolicy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
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
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "kproxy")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/kproxy").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
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

	cmd := exec.Command(bin, "--config", cfgPath)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	logs := make(chan map[string]any, 1000)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				logs <- m
			}
		}
		close(logs)
	}()
	waitLog := func(what string, match func(m map[string]any) bool) map[string]any {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case m, ok := <-logs:
				if !ok {
					t.Fatalf("kproxy exited while waiting for %s", what)
				}
				if match(m) {
					return m
				}
			case <-deadline:
				t.Fatalf("no log line for %s", what)
			}
		}
	}
	msgIs := func(prefix string) func(map[string]any) bool {
		return func(m map[string]any) bool { s, _ := m["message"].(string); return strings.HasPrefix(s, prefix) }
	}
	var bootstrap, admin string
	for bootstrap == "" || admin == "" {
		m := waitLog("listener addresses", func(m map[string]any) bool {
			s, _ := m["message"].(string)
			return m["listener"] == "bootstrap" || strings.HasPrefix(s, "admin endpoint")
		})
		if m["listener"] == "bootstrap" {
			bootstrap, _ = m["addr"].(string)
		} else {
			admin, _ = m["addr"].(string)
		}
	}
	waitReady(t, "http://"+admin+"/readyz")

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
	if metrics := get(t, "http://"+admin+"/metrics"); !strings.Contains(metrics, `kproxy_policy_reloads_total{result="failure"} 1`) {
		t.Errorf("/metrics lacks the reload failure:\n%s", grepLines(metrics, "kproxy_policy"))
	}

	// SIGHUP re-reads the file: make it valid and deny again, then wait for
	// the file watcher's reload before signalling, so the SIGHUP reload is
	// the one observed.
	write(reloadDeny)
	waitLog("reload on file change", msgIs("policy reloaded"))
	cmd.Process.Signal(syscall.SIGHUP)
	m = waitLog("reload on SIGHUP", msgIs("policy reloaded"))
	if m["trigger"] != "sighup" {
		t.Errorf("reload trigger %v, want sighup", m["trigger"])
	}
	if err := produce(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("after reloading the deny policy: %v", err)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() {
		for range logs {
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("kproxy exited with %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("kproxy did not exit after SIGTERM")
	}
	audit, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(audit), `"client_id":"binary-test"`) || !strings.Contains(string(audit), `"decision":"deny"`) {
		t.Errorf("audit file lacks the denials:\n%s", audit)
	}
}

func waitReady(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never became ready", url)
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
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
