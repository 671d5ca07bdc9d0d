package policy

import (
	"testing"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// TestVirtualClusterPrincipal: VirtualCluster:NAME matches the virtual
// cluster a connection came in on, never a connection outside any, and the
// audit line names the virtual cluster.
func TestVirtualClusterPrincipal(t *testing.T) {
	enf, out := auditedEnforcer(t, `
policy:
  rules:
    - {name: team-a-writes, principals: ["VirtualCluster:team-a"], allow: [write], topics: ["*"]}
`)
	for _, tc := range []struct {
		vc      string
		allowed bool
	}{{"team-a", true}, {"team-b", false}, {"", false}} {
		conn := &filter.Conn{ID: 1, Listener: "bootstrap", VirtualCluster: tc.vc}
		v := filterRequest(enf, conn, produceReq(9, -1, "orders:0"))
		if allowed := v.Respond == nil; allowed != tc.allowed {
			t.Errorf("virtual cluster %q: allowed %v, want %v", tc.vc, allowed, tc.allowed)
		}
	}
	enf.Close()
	lines := logbuf.JSONLines[map[string]any](t, out)
	if len(lines) != 2 {
		t.Fatalf("%d audit lines, want the 2 denials: %v", len(lines), lines)
	}
	if vc := lines[0]["virtual_cluster"]; vc != "team-b" {
		t.Errorf("audit line of team-b: virtual_cluster %v", vc)
	}
	if vc, ok := lines[1]["virtual_cluster"]; ok {
		t.Errorf("audit line outside any virtual cluster has virtual_cluster %v: lines must stay as they were", vc)
	}
}
