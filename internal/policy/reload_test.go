package policy

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

const reloadBase = "upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\n"

func writeConfig(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(reloadBase+body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestReloaderFromFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kproxy.yaml")
	writeConfig(t, path, "policy: {default: deny}\n")
	running, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var logs logbuf.Buffer
	enf, err := New(running.Policy, running.Audit, WithRegisterer(prometheus.NewRegistry()), WithAuditWriter(&bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	defer enf.Close()
	r := NewReloader(path, running, enf, zerolog.New(&logs))
	allowed := func() bool { return enf.FilterRequest(testConn, kmsg.NewPtrHeartbeatRequest()).Respond == nil }
	if allowed() {
		t.Fatal("default deny allowed")
	}

	writeConfig(t, path, "policy: {default: allow}\nlisteners: {bootstrap_port: 9999}\n")
	if err := r.Reload("test"); err != nil {
		t.Fatal(err)
	}
	if !allowed() {
		t.Fatal("reloaded allow policy not applied")
	}
	if !strings.Contains(logs.String(), `"section":"listeners"`) {
		t.Errorf("a listeners change was not logged as needing a restart: %s", logs.String())
	}

	writeConfig(t, path, "policy: {default: allow, rules: [{name: r, principals: [\"*\"], allow: [wrte], topics: [\"*\"]}]}\n")
	err = r.Reload("test")
	if err == nil || !strings.Contains(err.Error(), `policy.rules[0].allow[0]: "wrte" is not an operation`) {
		t.Fatalf("broken file: %v", err)
	}
	if !strings.Contains(logs.String(), "wrte") {
		t.Errorf("the rejection log does not name the problem: %s", logs.String())
	}
	if !allowed() {
		t.Fatal("a broken file replaced the policy in force")
	}
	if n := counterValue(enf.metrics.reloadFailed); n != 1 {
		t.Errorf("reload failures %v, want 1", n)
	}

	// Watch notices a change by itself.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Watch(ctx, 10*time.Millisecond)
	writeConfig(t, path, "policy: {default: deny}\n# changed size\n")
	deadline := time.Now().Add(5 * time.Second)
	for allowed() {
		if time.Now().After(deadline) {
			t.Fatal("Watch did not apply the changed file")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := counterValue(enf.metrics.reloadOK); n != 2 {
		t.Errorf("reload successes %v, want 2", n)
	}
}
