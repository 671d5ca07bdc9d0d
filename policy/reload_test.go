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
	"github.com/kproxy/kproxy/policy/policyconfig"
)

const reloadBase = "upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\n"

func writeConfig(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(reloadBase+body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestReloadApplierWithoutEnforcer: kproxy started without a policy cannot
// start enforcing one on reload; it says a restart is needed.
func TestReloadApplierWithoutEnforcer(t *testing.T) {
	var logs bytes.Buffer
	apply := ReloadApplier(nil)
	apply.ConfigRejected(os.ErrNotExist) // nothing to count it on
	if err := apply.ApplyConfig(&config.Config{}, zerolog.New(&logs)); err != nil || logs.Len() != 0 {
		t.Fatalf("no policy before or after: %v, logged %s", err, logs.String())
	}
	if err := apply.ApplyConfig(&config.Config{Policy: &policyconfig.Policy{}}, zerolog.New(&logs)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "policy section added, but kproxy started without one: restart to enforce it") {
		t.Errorf("an added policy section was not logged as needing a restart: %s", logs.String())
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
	r := config.NewReloader(path, running, ReloadApplier(enf), zerolog.New(&logs))
	allowed := func() bool { return filterRequest(enf, testConn, kmsg.NewPtrHeartbeatRequest()).Respond == nil }
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
