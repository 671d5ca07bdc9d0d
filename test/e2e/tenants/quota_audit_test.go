package e2etenants

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestThrottleLinesInTheAuditFile: with audit.output set, a produce a
// quota throttles is written to that file, labelled with its virtual
// cluster: for team-a, whose policy authorizes (its enforcer writes the
// line beside its decisions), and for team-b, whose policy holds quotas
// alone (an audit log of its own on the same file).
func TestThrottleLinesInTheAuditFile(t *testing.T) {
	t.Parallel()
	// 10 kB (random, so that compression keeps them) in one produce is about 100 kB/s over the 100 ms a 2-window
	// rate spans at first: five times the quota, a throttle of about 0.8 s.
	quotas := func(name string) string {
		return fmt.Sprintf(`quota_windows: {samples: 2, size: 100ms}, quota_audit_sample_rate: 1, `+
			`quotas: [{name: %s, principals: ["*"], produce_bytes_per_second: 20000}]`, name)
	}
	e := newEnv(t, 1, "{default: allow, "+quotas("a-produce")+"}", "{"+quotas("b-produce")+"}")
	ctx := testkit.Context(t, 30*time.Second)
	value := make([]byte, 10_000)
	rand.Read(value)
	for _, tenant := range tenants {
		e.createTopic(ctx, tenant, "orders", 1)
		cl := e.client(tenant, kgo.DefaultProduceTopic("orders"), kgo.ClientID("app-"+tenant))
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
			t.Fatalf("%s produce: %v", tenant, err)
		}
	}

	throttled := func(tenant string) map[string]any {
		for _, line := range e.auditLines() {
			var l map[string]any
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				t.Fatalf("audit line %q: %v", line, err)
			}
			if l["decision"] == "throttle" && l["virtual_cluster"] == tenant {
				return l
			}
		}
		return nil
	}
	// Audit lines are written off the request path.
	testkit.WaitFor(10*time.Second, func() bool { return throttled("team-a") != nil && throttled("team-b") != nil })
	for _, tenant := range tenants {
		l := throttled(tenant)
		if l == nil {
			t.Errorf("no throttle line of %s in the audit file:\n%s", tenant, strings.Join(e.auditLines(), "\n"))
			continue
		}
		want := map[string]any{"quota": tenant[len("team-"):] + "-produce", "kind": "produce", "principal": "User:ANONYMOUS",
			"client_id": "app-" + tenant, "client": "127.0.0.1", "sample_rate": 1.0}
		for k, v := range want {
			if l[k] != v {
				t.Errorf("%s's throttle line: %s = %v, want %v: %v", tenant, k, l[k], v, l)
			}
		}
		if ms, _ := l["throttle_ms"].(float64); ms <= 0 {
			t.Errorf("%s's throttle line: throttle_ms %v, want > 0", tenant, l["throttle_ms"])
		}
	}
}
