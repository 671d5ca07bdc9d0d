package e2epolicy

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
	"github.com/kproxy/kproxy/policy"
)

// TestAuditModeForwardsAndLogs: in audit mode what would be denied is
// forwarded unchanged and logged as one JSON line per would-be denial.
func TestAuditModeForwardsAndLogs(t *testing.T) {
	e := newEnv(t, 1, []string{"allowed.t", "denied.t"}, strings.Replace(producePolicy, "default: deny", "default: deny\n  mode: audit", 1))
	ctx := testkit.Context(t, 30*time.Second)
	raw := testkit.DialRaw(t, e.proxy.BootstrapAddr(), "e2e-audit")
	// Forwarded unchanged, so answered in whatever order the broker uses.
	codes := strings.Fields(produceCodes(raw.MustRoundTrip(t, produceRequest(-1, "denied.t", "allowed.t"))))
	slices.Sort(codes)
	if got := strings.Join(codes, " "); got != "allowed.t=0 denied.t=0" {
		t.Fatalf("audit mode answered %q, want both written", got)
	}
	if got := e.endOffset(ctx, "denied.t", 0); got != 1 {
		t.Errorf("denied.t/0 end offset %d: audit mode must forward", got)
	}
	var lines []map[string]string
	sc := bufio.NewScanner(strings.NewReader(e.auditLines()))
	for sc.Scan() {
		var m map[string]string
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	found := false
	for _, l := range lines {
		if l["api"] == "Produce" && l["resource"] == "denied.t" {
			found = true
			want := map[string]string{"decision": policy.DecisionAuditDeny, "operation": "Write", "resource_type": "Topic",
				"rule": policy.DefaultRule, "client_id": "e2e-audit", "principal": "User:ANONYMOUS"}
			for k, v := range want {
				if l[k] != v {
					t.Errorf("audit %s = %q, want %q", k, l[k], v)
				}
			}
			if !strings.HasPrefix(l["client"], "127.0.0.1:") {
				t.Errorf("audit client = %q", l["client"])
			}
		}
		if l["resource"] == "allowed.t" {
			t.Errorf("allowed decision logged without audit.log_allowed: %v", l)
		}
	}
	if !found {
		t.Errorf("no audit line for the would-be denial; got %v", lines)
	}
	if n := testkit.MetricValue(t, e.reg, "kproxy_policy_decisions_total", "decision", "audit_deny"); n < 1 {
		t.Errorf("audit_deny metric %v", n)
	}
}

const reloadDeny = `
policy:
  rules:
    - {name: describe-all, principals: ["*"], allow: [describe], topics: ["*"]}
`

const reloadAllow = `
policy:
  rules:
    - {name: describe-all, principals: ["*"], allow: [describe], topics: ["*"]}
    - {name: writers, principals: ["cidr:127.0.0.0/8"], allow: [write], topics: ["t"]}
`

// TestHotReloadAppliesToExistingConnection: one connection is denied; the
// policy is reloaded; the same connection's next request is allowed. Then
// a broken file is rejected, the policy in force stays, and the failure is
// counted.
func TestHotReloadAppliesToExistingConnection(t *testing.T) {
	e := newEnforcerEnv(t, 1, []string{"t"}, reloadDeny)
	ctx := testkit.Context(t, 30*time.Second)
	raw := testkit.DialRaw(t, e.proxy.BootstrapAddr(), "long-lived")
	if got := produceCodes(raw.MustRoundTrip(t, produceRequest(-1, "t"))); got != "t=29" {
		t.Fatalf("before reload: %q", got)
	}

	// Through the API.
	if err := e.enf.Reload(parseConfig(t, reloadAllow).Policy, nil); err != nil {
		t.Fatal(err)
	}
	if got := produceCodes(raw.MustRoundTrip(t, produceRequest(-1, "t"))); got != "t=0" {
		t.Fatalf("after reload, same connection: %q", got)
	}

	// Through the file: back to deny, then a broken file.
	path := filepath.Join(t.TempDir(), "kproxy.yaml")
	write := func(body string) {
		if err := os.WriteFile(path, []byte("upstream: {bootstrap_servers: [\"127.0.0.1:1\"]}\n"+body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(reloadAllow)
	running, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var logs logbuf.Buffer
	r := config.NewReloader(path, running, policy.ReloadApplier(e.enf), zerolog.New(&logs))
	write(reloadDeny)
	if err := r.Reload("test"); err != nil {
		t.Fatal(err)
	}
	if got := produceCodes(raw.MustRoundTrip(t, produceRequest(-1, "t"))); got != "t=29" {
		t.Fatalf("after file reload to deny: %q", got)
	}
	write(reloadAllow)
	if err := r.Reload("test"); err != nil {
		t.Fatal(err)
	}
	write(strings.Replace(reloadAllow, "cidr:127.0.0.0/8", "cidr:127.0.0/8", 1))
	if err := r.Reload("test"); err == nil {
		t.Fatal("a broken file was accepted")
	}
	if !strings.Contains(logs.String(), "policy.rules[1].principals[0]") {
		t.Errorf("the rejection does not name the key: %s", logs.String())
	}
	if got := produceCodes(raw.MustRoundTrip(t, produceRequest(-1, "t"))); got != "t=0" {
		t.Fatalf("after a broken file the old policy must stay: %q", got)
	}
	if n := testkit.MetricValue(t, e.reg, "kproxy_policy_reloads_total", "result", "failure"); n != 1 {
		t.Errorf("reload failures %v, want 1", n)
	}
	if n := testkit.MetricValue(t, e.reg, "kproxy_policy_reloads_total", "result", "success"); n != 3 {
		t.Errorf("reload successes %v, want 3", n)
	}
	if got := e.endOffset(ctx, "t", 0); got != 2 {
		t.Errorf("end offset %d, want the 2 allowed records", got)
	}
	// The connection survived everything.
	hb := kmsg.NewPtrApiVersionsRequest()
	if raw.MustRoundTrip(t, hb).(*kmsg.ApiVersionsResponse).ErrorCode != 0 {
		t.Error("connection unusable after reloads")
	}
}
