package proxy_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/proxy"
)

// TestPolicyExplainEndpointAndReloadDiff: /policy/explain answers under
// the policy in force, before and after a reload, and the reload's log
// line counts the access it gained and lost and lists the changes.
func TestPolicyExplainEndpointAndReloadDiff(t *testing.T) {
	cluster := testkit.Cluster(t, 1)
	base := testkit.LocalConfig(cluster.ListenAddrs()[0])
	const before = `policy:
  rules:
    - {name: writers, principals: ["User:alice"], allow: [write], topics: ["orders*"]}
`
	kp := serveReloadable(t, base+before, proxy.Options{})

	type explained struct {
		Decision  string `json:"decision"`
		DecidedBy string `json:"decided_by"`
		Error     string `json:"error"`
	}
	explain := func(query string) (int, explained) {
		t.Helper()
		resp, err := http.Get("http://" + kp.Admin + "/policy/explain?" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var x explained
		if err := json.NewDecoder(resp.Body).Decode(&x); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return resp.StatusCode, x
	}
	const q = "principal=User:alice&operation=write&topic=orders.eu" // docs/policy.md's curl example
	if code, x := explain(q); code != http.StatusOK || x.Decision != "ALLOW" || x.DecidedBy != "policy.rules[0]" {
		t.Errorf("before the reload: %d %+v, want 200 ALLOW by policy.rules[0]", code, x)
	}
	if code, x := explain("principal=alice&operation=write&topic=t"); code != http.StatusBadRequest || !strings.Contains(x.Error, "write User:NAME") {
		t.Errorf("a bad principal: %d %+v, want 400 saying how to write one", code, x)
	}

	after := strings.Replace(before, `topics: ["orders*"]`, `topics: ["orders.us"]`, 1) +
		`    - {name: bob, principals: ["User:bob"], allow: [read], groups: ["g1"]}
`
	kp.reloadWith(base + after)
	line := kp.WaitLog("the reload applied", func(l testkit.LogLine) bool { return strings.HasPrefix(l.Message(), "policy reloaded") })
	// bob gains READ and DESCRIBE on g1; alice loses WRITE and DESCRIBE on
	// orders* (the pattern stands for the names it matched), and keeps
	// them on orders.us.
	if line["access_gained"] != float64(2) || line["access_lost"] != float64(2) {
		t.Errorf("reload line counts gained %v, lost %v; want 2 and 2: %v", line["access_gained"], line["access_lost"], line)
	}
	changes, _ := line["changes"].([]any)
	var got []string
	for _, c := range changes {
		got = append(got, c.(string))
	}
	want := []string{"- User:alice  WRITE  topic orders*", "- User:alice  DESCRIBE  topic orders*", "+ User:bob  READ  group g1", "+ User:bob  DESCRIBE  group g1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("reload line changes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if code, x := explain(q); code != http.StatusOK || x.Decision != "DENY" || x.DecidedBy != "default" {
		t.Errorf("after the reload: %d %+v, want 200 DENY by default", code, x)
	}
	if _, err := kp.Stop(); err != nil {
		t.Errorf("Run returned %v", err)
	}
}
