package policy

import (
	"net/netip"
	"strings"
	"testing"
)

const explainPolicy = `policy:
  default: deny
  rules:
    - {name: readers, principals: ["User:bob"], allow: [read], topics: ["orders*"]}
    - {name: writers, principals: ["User:alice", "cidr:10.0.0.0/8"], allow: [write], topics: ["orders*"]}
    - {name: no-secrets, principals: ["*"], deny: [all], topics: ["orders.secret"]}
    - {name: also-writers, principals: ["User:alice"], allow: [all], topics: ["orders.eu"]}
  governance:
    - {name: acks, topics: ["orders*"], produce: {required_acks: all}}
    - {name: ids, principals: ["User:bob"], client_id_pattern: "bob-*"}
  quotas:
    - {name: alice, principals: ["User:alice"], produce_bytes_per_second: 1048576}
    - {name: everyone, principals: ["*"], produce_bytes_per_second: 10, max_connections: 5}
`

func explainOf(t *testing.T, p Principal, op Operation, rt ResourceType, name string) Explanation {
	t.Helper()
	c, err := NewChecker(parsePolicy(t, explainPolicy).Policy, "policy")
	if err != nil {
		t.Fatal(err)
	}
	return c.Explain(Question{Principal: p, Operation: op, Resource: rt, Name: name})
}

// TestExplainNamesTheDecidingRuleAndWhyOthersDidNot: the first matching
// allow decides; each other rule says which of its parts did not match.
func TestExplainNamesTheDecidingRuleAndWhyOthersDidNot(t *testing.T) {
	x := explainOf(t, Principal{User: "alice"}, OpWrite, ResTopic, "orders.eu")
	if x.Decision != "ALLOW" || x.DecidedBy != "policy.rules[1]" {
		t.Fatalf("decision %s by %s, want ALLOW by policy.rules[1]", x.Decision, x.DecidedBy)
	}
	if want := "{name: writers, principals: [User:alice, cidr:10.0.0.0/8], allow: [write], topics: [orders*]}"; x.Rule != want {
		t.Errorf("rule text %q, want %q", x.Rule, want)
	}
	wantReasons := []struct{ outcome, says string }{
		{"no match", "principal: User:alice is none of [User:bob]"},
		{"decided", "first matching allow"},
		{"no match", "resource: topic orders.eu matches none of [orders.secret]"},
		{"matched", "policy.rules[1] came first"},
	}
	for i, w := range wantReasons {
		if r := x.Rules[i]; r.Outcome != w.outcome || !strings.Contains(r.Reason, w.says) {
			t.Errorf("rules[%d]: %s: %s; want %s: ...%s...", i, r.Outcome, r.Reason, w.outcome, w.says)
		}
	}
	if len(x.Governance) != 1 || x.Governance[0].Key != "policy.governance[0]" {
		t.Errorf("governance %+v, want only policy.governance[0] (acks; ids is bob's)", x.Governance)
	}
	if len(x.Quotas) != 2 || strings.Join(x.Quotas[0].InForce, ",") != "produce_bytes_per_second 1048576" ||
		strings.Join(x.Quotas[1].InForce, ",") != "max_connections 5" {
		t.Errorf("quotas %+v, want alice's produce rate and everyone's max_connections in force", x.Quotas)
	}
}

// TestExplainDenyWins: a matching deny decides, and the allows that also
// matched are said to have lost.
func TestExplainDenyWins(t *testing.T) {
	x := explainOf(t, Principal{User: "alice"}, OpWrite, ResTopic, "orders.secret")
	if x.Decision != "DENY" || x.DecidedBy != "policy.rules[2]" {
		t.Fatalf("decision %s by %s, want DENY by policy.rules[2]", x.Decision, x.DecidedBy)
	}
	if r := x.Rules[1]; r.Outcome != "matched" || !strings.Contains(r.Reason, "policy.rules[2] denies and a deny wins") {
		t.Errorf("rules[1]: %s: %s; want matched, lost to the deny", r.Outcome, r.Reason)
	}
}

// TestExplainDefault: with no rule matching, the default decides, and a
// host in a rule's CIDR is what matches it.
func TestExplainDefault(t *testing.T) {
	x := explainOf(t, Principal{User: "carol"}, OpRead, ResGroup, "g1")
	if x.Decision != "DENY" || x.DecidedBy != "default" {
		t.Fatalf("decision %s by %s, want DENY by default", x.Decision, x.DecidedBy)
	}
	if r := x.Rules[0]; !strings.Contains(r.Reason, "principal") {
		t.Errorf("rules[0]: %s, want a principal mismatch", r.Reason)
	}
	x = explainOf(t, Principal{User: "carol", Addr: netip.MustParseAddr("10.1.2.3")}, OpDescribe, ResGroup, "g1")
	if r := x.Rules[1]; r.Reason != "resource: the rule names no group" {
		t.Errorf("rules[1]: %q, want the rule to name no group", r.Reason)
	}
	x = explainOf(t, Principal{User: "carol", Addr: netip.MustParseAddr("10.1.2.3")}, OpDescribe, ResTopic, "orders.us")
	if x.Decision != "ALLOW" || x.DecidedBy != "policy.rules[1]" {
		t.Errorf("describe from 10.1.2.3: %s by %s, want ALLOW by policy.rules[1] (write implies describe)", x.Decision, x.DecidedBy)
	}
	var b strings.Builder
	if err := x.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "ALLOW  User:carol  DESCRIBE  topic orders.us\ndecided by policy.rules[1]: {name: writers") {
		t.Errorf("text:\n%s", b.String())
	}
}

// TestExplainAgreesWithDecide: explain's decision is Decide's, for every
// rule of the benchmark policy and names inside and outside them.
func TestExplainAgreesWithDecide(t *testing.T) {
	cfg := parsePolicy(t, benchPolicy(50))
	c, err := NewChecker(cfg.Policy, "policy")
	if err != nil {
		t.Fatal(err)
	}
	for _, user := range []string{"svc-7", "reader-9", "nobody"} {
		for _, addr := range []string{"10.20.0.1", "192.168.0.1"} {
			p := Principal{User: user, Addr: netip.MustParseAddr(addr), ClientID: "ro-9-x"}
			for _, name := range []string{"team7.a", "team9.b", "team20.secret", "other"} {
				for _, op := range []Operation{OpRead, OpWrite, OpDescribe, OpDelete} {
					for _, rt := range []ResourceType{ResTopic, ResGroup, ResTransactionalID} {
						q := Question{Principal: p, Operation: op, Resource: rt, Name: name}
						d, x := c.Decide(q), c.Explain(q)
						if (x.Decision == "ALLOW") != d.Allowed {
							t.Errorf("%+v: explain %s, decide %v", q, x.Decision, d)
						}
					}
				}
			}
		}
	}
}

// TestExplainWithoutAuthorizingPolicy: without a policy, or with quotas
// alone, every request is forwarded unchecked, and explain says so (with
// the quotas that still apply); in audit mode a denial says it is only
// logged.
func TestExplainWithoutAuthorizingPolicy(t *testing.T) {
	q := Question{Principal: Principal{User: "alice"}, Operation: OpWrite, Resource: ResTopic, Name: "t"}
	none, err := NewChecker(nil, "policy")
	if err != nil {
		t.Fatal(err)
	}
	if x := none.Explain(q); x.Decision != "ALLOW" || x.DecidedBy != "no policy" {
		t.Errorf("no policy: %s by %s, want ALLOW by no policy", x.Decision, x.DecidedBy)
	}
	quotas, err := NewChecker(parsePolicy(t, "policy:\n  quotas: [{name: q, principals: [\"*\"], max_connections: 3}]\n").Policy, "policy")
	if err != nil {
		t.Fatal(err)
	}
	if x := quotas.Explain(q); x.Decision != "ALLOW" || x.DecidedBy != "no policy" || len(x.Quotas) != 1 {
		t.Errorf("quotas alone: %s by %s, quotas %+v; want ALLOW by no policy, quota q", x.Decision, x.DecidedBy, x.Quotas)
	}
	audit, err := NewChecker(parsePolicy(t, "policy: {mode: audit}\n").Policy, "policy")
	if err != nil {
		t.Fatal(err)
	}
	x := audit.Explain(q)
	var b strings.Builder
	x.WriteText(&b)
	if x.Decision != "DENY" || !strings.Contains(b.String(), "mode audit: the denial is logged, and the request forwarded") {
		t.Errorf("audit mode: %s\n%s", x.Decision, b.String())
	}
}
