// Package observability checks kproxy's dashboard and alert rules
// (deploy/grafana, deploy/prometheus) against a real Prometheus scraping a
// real kproxy that real clients use.
package observability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// maxConnections is limits.max_connections of the kproxy under test; the
// test opens one more than that at once to hit the limit.
const maxConnections = 16

// The policies: producerPolicy lets clients named obs-* produce and
// consume topic t and denies everyone else any write, so an idempotent
// producer named otherwise is refused InitProducerId
// (CLUSTER_AUTHORIZATION_FAILED, a top-level error code). reloadedPolicy
// is the change the test reloads.
const (
	producerPolicy = `
policy:
  default: deny
  rules:
    - {name: describe-all, principals: ["*"], allow: [describe], topics: ["*"]}
    - {name: obs-clients, principals: ["client_id:obs-*"], allow: [read, write], topics: ["t"]}
`
	reloadedPolicy = producerPolicy + `    - {name: late-readers, principals: ["client_id:late-*"], allow: [read], topics: ["t"]}
`
)

// kproxyConfig is the configuration file's text: kproxy in front of
// upstream with the policy, its audit log in auditPath.
func kproxyConfig(upstream, auditPath, policy string) string {
	return testkit.LocalConfig(upstream) + fmt.Sprintf("limits: {max_connections: %d}\naudit: {output: %q}\n", maxConnections, auditPath) + policy
}

// TestDashboardAndAlertsAgainstPrometheus: Prometheus scrapes kproxy while
// franz-go produces and consumes through it, one request is denied by the
// policy, the configuration is reloaded (once accepted, once rejected),
// the connection limit is hit once and finally the upstream cluster is
// stopped. Then every expression of every dashboard panel returns a
// series, every series selector of every alert rule matches a series
// (those on TLS, SASL, OAUTHBEARER and quota series: TestAlertsFire) and
// every rule evaluates without error; the alerts for what the test
// induced (upstream unreachable, connection limit hit, reload failed) are
// true. promtool accepts the rules file and kproxy's /metrics.
func TestDashboardAndAlertsAgainstPrometheus(t *testing.T) {
	promtool := needTool(t, "promtool")
	needTool(t, "prometheus")
	dashboard, rules := dashboardExpressions(t), alertRules(t)
	ctx := testkit.Context(t, 90*time.Second)

	if out, err := exec.Command(promtool, "check", "rules", rulesFile).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules %s: %v\n%s", rulesFile, err, out)
	}

	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "t"))
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	config := func(policy string) string { return kproxyConfig(cluster.ListenAddrs()[0], auditPath, policy) }
	kp := kproxytest.Start(t, config(producerPolicy), kproxytest.WithLog(io.Discard, zerolog.InfoLevel))
	prom := startPrometheus(t, kp.AdminAddr(), rulesFile)

	produceAndConsume(ctx, t, kp.BootstrapAddr(), 50)
	denyOnePolicy(ctx, t, kp.BootstrapAddr())
	reloadTwice(t, kp, config)
	hitConnectionLimit(t, kp.BootstrapAddr())
	checkMetricsLint(t, promtool, kp.AdminAddr())

	// The induced fault: the whole upstream cluster stops.
	cluster.Close()
	unreachable := ruleNamed(t, rules, "KproxyUpstreamUnreachable")
	waitTrue(ctx, t, prom, unreachable, func() { knock(kp.BootstrapAddr()) })

	for _, alert := range []string{"KproxyConnectionLimitHit", "KproxyConfigReloadFailed"} {
		waitTrue(ctx, t, prom, ruleNamed(t, rules, alert), func() {})
	}
	checkEverySeries(ctx, t, prom, securityPanels(dashboard, false), rules, securityRules(false))
}

// produceAndConsume produces n records to t through kproxy and consumes
// them back.
func produceAndConsume(ctx context.Context, t *testing.T, bootstrap string, n int) {
	t.Helper()
	producer, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ClientID("obs-producer"), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	for i := range n {
		if err := producer.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "record %d", i)}).FirstErr(); err != nil {
			t.Fatalf("produce through kproxy: %v", err)
		}
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ClientID("obs-consumer"), kgo.ConsumeTopics("t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	for got := 0; got < n; {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("consume through kproxy after %d records: %v", got, err)
		}
		got += fs.NumRecords()
	}
}

// denyOnePolicy makes the policy deny one request: an idempotent producer
// without a write grant asks for a producer id.
func denyOnePolicy(ctx context.Context, t *testing.T, bootstrap string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ClientID("outsider"), kgo.DefaultProduceTopic("t"), kgo.RecordRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("idempotent produce without a grant: %v, want CLUSTER_AUTHORIZATION_FAILED", err)
	}
}

// reloadTwice changes the policy in the file (accepted) and then breaks
// the file (rejected; the running configuration stays).
func reloadTwice(t *testing.T, kp *kproxytest.Kproxy, config func(policy string) string) {
	t.Helper()
	kp.Reload(config(reloadedPolicy))
	kp.WaitLog("the accepted reload", testkit.MessagePrefix("policy reloaded"))
	kp.Reload(config(strings.Replace(reloadedPolicy, "allow: [read]", "allow: [raed]", 1)))
	kp.WaitLog("the rejected reload", testkit.MessagePrefix("configuration reload rejected"))
}

// hitConnectionLimit opens one connection more than limits.max_connections
// at once, so kproxy refuses at least one, and closes them all.
func hitConnectionLimit(t *testing.T, bootstrap string) {
	t.Helper()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range maxConnections + 1 {
		c, err := net.Dial("tcp", bootstrap)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// The refused connection is closed by kproxy: some read ends.
	refused := false
	for deadline := time.Now().Add(10 * time.Second); !refused && time.Now().Before(deadline); {
		for _, c := range conns {
			c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			if _, err := c.Read(make([]byte, 1)); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				refused = true
			}
		}
	}
	if !refused {
		t.Fatalf("%d connections at once with limits.max_connections %d: none refused", maxConnections+1, maxConnections)
	}
}

// knock opens a client connection to kproxy and sends it a request, so
// kproxy dials its upstream.
func knock(bootstrap string) {
	c, err := net.DialTimeout("tcp", bootstrap, time.Second)
	if err != nil {
		return
	}
	defer c.Close()
	// An ApiVersions v0 request header: size, key 18, version 0, correlation id 1, empty client id.
	c.Write([]byte{0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 1, 0, 0})
	c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	c.Read(make([]byte, 64))
}

// checkMetricsLint runs promtool check metrics on a /metrics scrape.
func checkMetricsLint(t *testing.T, promtool, admin string) {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics on kproxy's /metrics: %v\n%s", err, out)
	}
}

// waitTrue waits until rule's expression returns a series (is true),
// calling nudge before each try.
func waitTrue(ctx context.Context, t *testing.T, prom *promServer, rule alertRule, nudge func()) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		nudge()
		got, err := prom.query(ctx, rule.Expr)
		switch {
		case err != nil:
			last = err.Error()
		case len(got) > 0:
			return
		default:
			last = "no series"
		}
	}
	t.Errorf("alert %s never became true within 20s (%s): %s", rule.Alert, last, rule.Expr)
}

// checkEverySeries waits (up to 20 s, Prometheus scrapes every second)
// until every dashboard expression returns a series, every selector of
// every alert rule selected matches one and every rule evaluated without
// error, and reports each one that did not.
func checkEverySeries(ctx context.Context, t *testing.T, prom *promServer, dashboard []expression, rules []alertRule, selected func(alertRule) bool) {
	t.Helper()
	var missing []string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Second) {
		missing = missing[:0]
		for _, e := range dashboard {
			if got, err := prom.query(ctx, e.expr); err != nil || len(got) == 0 {
				missing = append(missing, fmt.Sprintf("dashboard %s returned no series (err %v): %s", e.where, err, e.expr))
			}
		}
		for _, r := range rules {
			if _, err := prom.query(ctx, r.Expr); err != nil {
				missing = append(missing, fmt.Sprintf("alert %s does not evaluate: %v", r.Alert, err))
			}
			if !selected(r) {
				continue
			}
			for _, s := range selectors(r.Expr) {
				if got, err := prom.query(ctx, s); err != nil || len(got) == 0 {
					missing = append(missing, fmt.Sprintf("alert %s: selector %s matches no series (err %v)", r.Alert, s, err))
				}
			}
		}
		health, err := prom.rules(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(health) != len(rules) {
			missing = append(missing, fmt.Sprintf("prometheus loaded %d rules, the file has %d", len(health), len(rules)))
		}
		for _, h := range health {
			if h.Health != "ok" {
				missing = append(missing, fmt.Sprintf("rule %s health %q: %s", h.Name, h.Health, h.LastError))
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, m := range missing {
		t.Error(m)
	}
}
