package policy

import (
	"testing"

	"github.com/kproxy/kproxy/filter"
)

const claimPolicy = `
policy:
  default: deny
  rules:
    - name: payments-by-group
      principals: ["claim:groups=payments"]
      allow: [write, describe]
      topics: ["payments"]
    - name: readers-by-scope
      principals: ["Claim:scope=kafka.read*"]
      allow: [read, describe]
      topics: ["events"]
    - name: alice
      principals: ["User:alice"]
      allow: [describe]
      topics: ["alice"]
`

func TestClaimPrincipals(t *testing.T) {
	e := compilePolicy(t, claimPolicy)
	st := &state{engine: e, subjects: map[subjectKey]*ruleSubject{}}
	conn := func(user string, claims map[string][]string) *filter.Conn {
		return &filter.Conn{User: user, Claims: claims}
	}
	cases := []struct {
		name    string
		conn    *filter.Conn
		op      Operation
		topic   string
		allowed bool
	}{
		{"array claim member", conn("bob", map[string][]string{"groups": {"ops", "payments"}}), OpWrite, "payments", true},
		{"array claim without it", conn("bob", map[string][]string{"groups": {"ops"}}), OpWrite, "payments", false},
		{"string claim", conn("bob", map[string][]string{"groups": {"payments"}}), OpWrite, "payments", true},
		{"no claims (SCRAM)", conn("bob", nil), OpWrite, "payments", false},
		{"claim of another name", conn("bob", map[string][]string{"roles": {"payments"}}), OpWrite, "payments", false},
		{"scope pattern", conn("carol", map[string][]string{"scope": {"openid", "kafka.read.events"}}), OpRead, "events", true},
		{"scope pattern miss", conn("carol", map[string][]string{"scope": {"kafka.write"}}), OpRead, "events", false},
		{"OAuth user as User:", conn("alice", map[string][]string{"sub": {"alice"}}), OpDescribe, "alice", true},
	}
	for _, c := range cases {
		p := principalOf(c.conn)
		// Through the per-policy ruleSubject cache, twice, as requests do.
		for range 2 {
			if d := st.subject(&p).Decide(c.op, ResTopic, c.topic); d.Allowed != c.allowed {
				t.Errorf("%s: allowed %v, want %v (rule %q)", c.name, d.Allowed, c.allowed, d.Rule)
			}
		}
	}
	// Claims no rule names (jti, exp) do not make a new cache entry each.
	before := len(st.subjects)
	for _, jti := range []string{"1", "2", "3"} {
		p := principalOf(conn("bob", map[string][]string{"groups": {"payments"}, "jti": {jti}}))
		st.subject(&p)
	}
	if len(st.subjects) != before {
		t.Fatalf("unreferenced claims grew the ruleSubject cache from %d to %d", before, len(st.subjects))
	}
}
