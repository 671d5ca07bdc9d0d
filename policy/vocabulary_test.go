package policy

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// TestAuditDecisionIsTheMetricsLabel checks that for each decision the
// audit line's "decision" field and the decision label of
// kproxy_policy_decisions_total and kproxy_policy_rule_decisions_total
// are the same string, so one word finds a decision in logs and metrics.
func TestAuditDecisionIsTheMetricsLabel(t *testing.T) {
	for _, mode := range []string{"enforce", "audit"} {
		t.Run(mode, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			var out logbuf.Buffer
			cfg := parsePolicy(t, `
policy:
  mode: `+mode+`
  rules:
    - {name: w, principals: ["*"], allow: [write], topics: ["ok"]}
audit: {log_allowed: true}
`)
			enf, err := New(cfg.Policy, cfg.Audit, WithAuditWriter(&out), WithRegisterer(reg))
			if err != nil {
				t.Fatal(err)
			}
			filterRequest(enf, testConn, produceReq(9, -1, "ok:0", "nope:0"))
			enf.Close()
			lines := logbuf.JSONLines[map[string]string](t, &out)
			if len(lines) != 2 {
				t.Fatalf("%d audit lines, want 2 (one allowed, one denied): %v", len(lines), lines)
			}
			for _, l := range lines {
				decision := l["decision"]
				if n := testkit.MetricValue(t, reg, "kproxy_policy_decisions_total", "decision", decision); n != 1 {
					t.Errorf("audit decision %q: kproxy_policy_decisions_total{decision=%q} = %v, want 1", decision, decision, n)
				}
				if n := testkit.MetricValue(t, reg, "kproxy_policy_rule_decisions_total", "decision", decision, "rule", l["rule"]); n != 1 {
					t.Errorf("audit decision %q by rule %q: kproxy_policy_rule_decisions_total has %v, want 1", decision, l["rule"], n)
				}
			}
		})
	}
}
