package e2etenants

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
	"github.com/kproxy/kproxy/internal/testkit/tcppeer"
)

// TestOneProcessServesEveryVirtualCluster: both tenants are served by one
// process on listeners of their own, each with its own policy (team-b's
// denies writes, then a reload lets VirtualCluster:team-b write); every
// series of an engine carries virtual_cluster, the process-wide ones do
// not; connection log lines and audit lines name the virtual cluster.
func TestOneProcessServesEveryVirtualCluster(t *testing.T) {
	t.Parallel()
	allowAll := "{default: allow}"
	denyWrites := `{default: allow, rules: [{name: no-writes, principals: ["VirtualCluster:team-b"], deny: [write], topics: ["*"]}]}`
	e := newEnv(t, 2, allowAll, denyWrites)
	ctx := testkit.Context(t, 30*time.Second)

	if a, b := e.kp.VirtualClusterBootstrapAddr("team-a"), e.kp.VirtualClusterBootstrapAddr("team-b"); a == b || a == "" {
		t.Fatalf("bootstrap listeners %q and %q: want one each", a, b)
	}
	for _, tenant := range tenants {
		e.createTopic(ctx, tenant, "events-"+tenant, 1) // distinct names: this test is not about prefixes
	}
	produce := func(tenant string) error {
		cl := e.client(tenant, kgo.DefaultProduceTopic("events-"+tenant), kgo.RecordRetries(2))
		return cl.ProduceSync(ctx, kgo.StringRecord(tenant)).FirstErr()
	}
	if err := produce("team-a"); err != nil {
		t.Fatalf("team-a produce: %v", err)
	}
	if err := produce("team-b"); err == nil || !strings.Contains(err.Error(), kerr.TopicAuthorizationFailed.Message) {
		t.Fatalf("team-b produce under its no-writes policy: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	// Audit lines are written off the request path: wait for team-b's.
	var sawB bool
	testkit.WaitFor(5*time.Second, func() bool {
		return strings.Contains(strings.Join(e.auditLines(), "\n"), `"rule":"no-writes"`)
	})
	for _, line := range e.auditLines() {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if l["virtual_cluster"] == "team-b" && l["rule"] == "no-writes" {
			sawB = true
		}
		if l["virtual_cluster"] == nil {
			t.Errorf("audit line without virtual_cluster: %s", line)
		}
	}
	if !sawB {
		t.Errorf("no audit line of team-b's denial naming the virtual cluster in:\n%s", strings.Join(e.auditLines(), "\n"))
	}

	m := e.metrics()
	for _, want := range []string{
		`kproxy_connections_total{listener="bootstrap",virtual_cluster="team-a"}`,
		`kproxy_connections_total{listener="bootstrap",virtual_cluster="team-b"}`,
		`kproxy_ready{virtual_cluster="team-a"} 1`,
		`kproxy_ready{virtual_cluster="team-b"} 1`,
		`kproxy_build_info{commit="unknown",go_version="go`,
		`kproxy_config_reloads_total{result="success"} 0`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, unlabelled := range []string{"kproxy_connections_total{listener=", "kproxy_requests_total{api="} {
		for _, l := range strings.Split(m, "\n") {
			if strings.HasPrefix(l, unlabelled) && !strings.Contains(l, `virtual_cluster="`) {
				t.Errorf("an engine's series without virtual_cluster: %s", l)
			}
		}
	}

	// Reload: team-b's new policy lets it write.
	e.kp.Reload(strings.Replace(e.config, denyWrites, allowAll, 1))
	l := e.kp.WaitLog("team-b's policy reloaded", func(l testkit.LogLine) bool {
		return strings.HasPrefix(l.Message(), "policy reloaded") && l["virtual_cluster"] == "team-b"
	})
	if l["trigger"] != "sighup" {
		t.Errorf("reload line %v", l)
	}
	if err := produce("team-b"); err != nil {
		t.Errorf("team-b produce after the reload allowed it: %v", err)
	}
	if _, cfg := testkit.HTTPGet(t, "http://"+e.kp.AdminAddr()+"/config"); strings.Contains(cfg, "no-writes") || !strings.Contains(cfg, "team-b") {
		t.Errorf("/config does not serve team-b's reloaded policy:\n%s", cfg)
	}

	if err := e.kp.Stop(); err != nil {
		t.Errorf("Run returned %v", err)
	}
	lines := logbuf.JSONLines[testkit.LogLine](t, e.kp.Logs)
	seen := map[any]bool{}
	for _, l := range lines {
		if l.Message() == "connection opened" || l.Message() == "connection closed" {
			seen[l["virtual_cluster"]] = true
		}
	}
	if !seen["team-a"] || !seen["team-b"] || seen[nil] {
		t.Errorf("connection log lines by virtual_cluster: %v; want team-a and team-b, never none", seen)
	}
}

// TestReadyzWaitsForEveryVirtualCluster: /readyz is ready once every
// virtual cluster's engine is, and /brokers lists each one's brokers by
// name.
func TestReadyzWaitsForEveryVirtualCluster(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	if code, body := testkit.HTTPGet(t, "http://"+e.kp.AdminAddr()+"/readyz"); code != 200 {
		t.Errorf("/readyz %d %s", code, body)
	}
	_, body := testkit.HTTPGet(t, "http://"+e.kp.AdminAddr()+"/brokers")
	var brokers struct {
		VirtualClusters map[string][]map[string]any `json:"virtual_clusters"`
	}
	if err := json.Unmarshal([]byte(body), &brokers); err != nil || len(brokers.VirtualClusters["team-a"]) != 1 || len(brokers.VirtualClusters["team-b"]) != 1 {
		t.Errorf("/brokers %s (%v): want one broker per virtual cluster", body, err)
	}
	// Each tenant's Metadata names its own listeners only.
	for _, tenant := range tenants {
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(testkit.Context(t, 10*time.Second), e.client(tenant))
		if err != nil {
			t.Fatal(err)
		}
		own := e.kp.VirtualClusterBootstrapAddr(tenant)
		host := own[:strings.LastIndex(own, ":")]
		for _, b := range resp.Brokers {
			if b.Host != host {
				t.Errorf("%s told broker host %s", tenant, b.Host)
			}
		}
	}
}

// TestReadyzNotReadyWhileOneVirtualClusterIsNot: a virtual cluster whose
// upstream cannot be reached keeps /readyz at 503, naming it, though the
// other is ready.
func TestReadyzNotReadyWhileOneVirtualClusterIsNot(t *testing.T) {
	t.Parallel()
	cluster := testkit.Cluster(t, 1)
	dead := closedAddr(t)
	kp := kproxytest.Start(t, fmt.Sprintf(`upstream: {bootstrap_servers: [%q]}
admin: {listen: "127.0.0.1:0"}
log: {level: info, format: json}
virtual_clusters:
  - {name: up, listeners: {}, topic_prefix: up.}
  - {name: down, listeners: {}, topic_prefix: down., upstream: {bootstrap_servers: [%q]}}
`, cluster.ListenAddrs()[0], dead), kproxytest.Unready())
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(testkit.Context(t, 10*time.Second), testkit.Client(t, kgo.SeedBrokers(kp.VirtualClusterBootstrapAddr("up")))); err != nil {
		t.Fatalf("the reachable virtual cluster: %v", err)
	}
	code, body := testkit.HTTPGet(t, "http://"+kp.AdminAddr()+"/readyz")
	if code != 503 || !strings.Contains(body, "virtual cluster down") {
		t.Errorf("/readyz %d %q while virtual cluster down is not ready: want 503 naming it", code, body)
	}
}

// closedAddr is a loopback address nothing listens on, held until the
// test ends.
func closedAddr(t *testing.T) string {
	t.Helper()
	addr, _ := tcppeer.Refusing(t)
	return addr
}
