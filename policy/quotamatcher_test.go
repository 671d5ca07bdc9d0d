package policy

import (
	"reflect"
	"testing"

	"github.com/kproxy/kproxy/internal/quota"
)

// TestQuotaMatcherSeesEveryPrincipalKind: a quota rule matches on every
// principal kind a policy rule can name. It fails when Principal gains a
// field quota.Principal lacks (a rule of that kind would never match a
// quota), and when the adapter drops one.
func TestQuotaMatcherSeesEveryPrincipalKind(t *testing.T) {
	qt := reflect.TypeOf(quota.Principal{})
	pt := reflect.TypeOf(Principal{})
	for i := range pt.NumField() {
		name := pt.Field(i).Name
		if f, ok := qt.FieldByName(name); !ok || f.Type != pt.Field(i).Type {
			t.Errorf("quota.Principal has no %s %s: quota rules cannot match on it", name, pt.Field(i).Type)
		}
	}
	cases := []struct {
		principals []string
		p          quota.Principal
		want       bool
	}{
		{[]string{"VirtualCluster:team-a"}, quota.Principal{User: "u", VirtualCluster: "team-a"}, true},
		{[]string{"VirtualCluster:team-a"}, quota.Principal{User: "u", VirtualCluster: "team-b"}, false},
		{[]string{"claim:groups=payments"}, quota.Principal{User: "u", Claims: map[string][]string{"groups": {"ops", "payments"}}}, true},
		{[]string{"claim:groups=payments"}, quota.Principal{User: "u", Claims: map[string][]string{"groups": {"ops"}}}, false},
	}
	for _, c := range cases {
		m, err := QuotaMatcher(c.principals)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Match(&c.p); got != c.want {
			t.Errorf("%v matching %+v: %v, want %v", c.principals, c.p, got, c.want)
		}
	}
}
