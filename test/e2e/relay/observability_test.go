package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/engine"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// adminGet fetches path from an admin handler and returns status and body.
func adminGet(t *testing.T, kp *kproxytest.Kproxy, path string) (int, string) {
	t.Helper()
	return testkit.HTTPGet(t, "http://"+kp.AdminAddr()+path)
}

// TestObservabilityThroughFranzGo produces and consumes through kproxy
// with franz-go and checks what an operator sees: request, response,
// byte and latency series for the APIs the client used and no others,
// one log line per connection opened and closed, debug request summaries,
// and /brokers.
func TestObservabilityThroughFranzGo(t *testing.T) {
	const topic, records = "observed", 20
	cluster := testkit.Cluster(t, 3, kfake.SeedTopics(1, topic))
	logs := &logbuf.Buffer{}
	yaml := fmt.Sprintf("upstream:\n  bootstrap_servers: [%s]\nadmin: {listen: \"127.0.0.1:0\"}\nlog: {level: debug}\n", strings.Join(cluster.ListenAddrs(), ", "))
	kp := kproxytest.Start(t, yaml, kproxytest.WithLog(logs, zerolog.DebugLevel))

	ctx := testkit.Context(t, 30*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kp.BootstrapAddr()), kgo.ConsumeTopics(topic), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.NoCompression())) // so that the record bytes are on the wire
	if err != nil {
		t.Fatal(err)
	}
	value := strings.Repeat("v", 1000)
	for i := 0; i < records; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(value)}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	for got := 0; got < records; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("fetch: %v", err)
		}
		got += fs.NumRecords()
	}
	cl.Close()

	reg := kp.Registry
	for _, api := range []string{"Produce", "Fetch", "Metadata", "ApiVersions"} {
		if n := testkit.MetricValue(t, reg, "kproxy_requests_total", "api", api); n < 1 {
			t.Errorf("kproxy_requests_total{api=%q} = %v, want > 0", api, n)
		}
		if n := testkit.MetricValue(t, reg, "kproxy_responses_total", "api", api, "source", "upstream"); n < 1 {
			t.Errorf("kproxy_responses_total{api=%q,source=upstream} = %v, want > 0", api, n)
		}
		for _, h := range []string{"kproxy_request_duration_seconds", "kproxy_request_upstream_duration_seconds", "kproxy_request_proxy_duration_seconds"} {
			if n, _ := testkit.HistogramValue(t, reg, h, "api", api); n < 1 {
				t.Errorf("%s{api=%q} has no samples", h, api)
			}
		}
	}
	if n := testkit.MetricValue(t, reg, "kproxy_requests_total", "api", "Produce"); n < records {
		t.Errorf("kproxy_requests_total{api=Produce} = %v, want at least %d", n, records)
	}
	// Only what the client sent has series: franz-go uses about ten APIs,
	// kproxy knows about ninety.
	apis := testkit.LabelValues(t, reg, "kproxy_requests_total", "api")
	if len(apis) > 15 || apis["AlterPartitionReassignments"] || apis["DescribeQuorum"] {
		t.Errorf("kproxy_requests_total has series for APIs no client sent: %v", apis)
	}
	if versions := testkit.LabelValues(t, reg, "kproxy_requests_total", "version"); len(versions) == 0 {
		t.Error("kproxy_requests_total has no version label")
	}
	in := testkit.MetricValue(t, reg, "kproxy_received_bytes_total")
	out := testkit.MetricValue(t, reg, "kproxy_sent_bytes_total")
	if in < records*float64(len(value)) || out < records*float64(len(value)) {
		t.Errorf("received %v and sent %v bytes, want each at least the %d record bytes", in, out, records*len(value))
	}
	if nodes := testkit.LabelValues(t, reg, "kproxy_upstream_dials_total", "node_id"); !nodes["bootstrap"] || len(nodes) < 2 {
		t.Errorf("kproxy_upstream_dials_total node ids %v, want bootstrap and the brokers'", nodes)
	}
	waitFor(t, "no request in flight", func() bool { return testkit.MetricValue(t, reg, "kproxy_requests_in_flight") == 0 })

	// Every connection the client opened is logged opened and closed,
	// the close line with bytes each way, duration and reason.
	var opened, closed, summaries int
	waitFor(t, "a close line per opened connection", func() bool {
		opened, closed, summaries = 0, 0, 0
		for _, l := range logs.Lines(t) {
			switch l["message"] {
			case "connection opened":
				opened++
				if l["listener"] == nil || l["client"] == nil {
					t.Fatalf("open line lacks listener or client: %v", l)
				}
			case "connection closed":
				closed++
				for _, f := range []string{"listener", "client", "reason", "duration", "bytes_in", "bytes_out", "client_id"} {
					if l[f] == nil {
						t.Fatalf("close line lacks %s: %v", f, l)
					}
				}
			case "request":
				if l["api"] == "Produce" && l["correlation_id"] != nil && l["latency"] != nil && l["request_bytes"] != nil {
					summaries++
				}
			}
		}
		return opened > 0 && opened == closed
	})
	if summaries < records {
		t.Errorf("%d debug Produce request summaries, want at least %d", summaries, records)
	}

	var brokers []engine.BrokerStatus
	status, body := adminGet(t, kp, "/brokers")
	if err := json.Unmarshal([]byte(body), &brokers); status != http.StatusOK || err != nil {
		t.Fatalf("/brokers: %d %q: %v", status, body, err)
	}
	if len(brokers) != 3 {
		t.Fatalf("/brokers lists %d nodes, want 3: %s", len(brokers), body)
	}
	upstreams := map[string]bool{}
	for _, a := range cluster.ListenAddrs() {
		upstreams[a] = true
	}
	for _, b := range brokers {
		advertised, _ := kp.BrokerAddr(b.NodeID)
		if !upstreams[b.Upstream] || b.Advertised != advertised || !b.Listening {
			t.Errorf("/brokers node %d: %+v; want upstream one of %v and advertised %s", b.NodeID, b, cluster.ListenAddrs(), advertised)
		}
	}
}

// TestAdminConfigRedactsAndPprofIsOptIn checks /config serves the
// configuration in force without its secrets, and that /debug/pprof is
// served only with admin.pprof.
func TestAdminConfigRedactsAndPprofIsOptIn(t *testing.T) {
	const secret = "s3cret-upstream-password"
	cluster := testkit.Cluster(t, 1, kfake.EnableSASL(), kfake.Superuser("PLAIN", "svc", secret))
	yaml := func(pprof bool) string {
		return fmt.Sprintf(`upstream:
  bootstrap_servers: [%s]
  sasl: {mechanism: PLAIN, username: svc, password: %s}
admin: {listen: "127.0.0.1:0", pprof: %t}
`, cluster.ListenAddrs()[0], secret, pprof)
	}
	kp := kproxytest.Start(t, yaml(false))
	status, body := adminGet(t, kp, "/config")
	if status != http.StatusOK || !strings.Contains(body, "bootstrap_servers") || !strings.Contains(body, "[redacted]") {
		t.Errorf("/config: %d\n%s\nwant the configuration with the password redacted", status, body)
	}
	if strings.Contains(body, secret) {
		t.Errorf("/config shows the upstream password:\n%s", body)
	}
	if status, _ := adminGet(t, kp, "/debug/pprof/"); status != http.StatusNotFound {
		t.Errorf("/debug/pprof/ without admin.pprof: status %d, want 404", status)
	}
	on := kproxytest.Start(t, yaml(true))
	if status, body := adminGet(t, on, "/debug/pprof/"); status != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("/debug/pprof/ with admin.pprof: status %d, want 200 and the profile index", status)
	}
}

// waitFor polls cond for up to five seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
