// Package tracing_test checks kproxy's request traces with a real Jaeger.
package tracing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// jaegerBinEnv names the Jaeger all-in-one binary (.ci/run builds it from
// test/jaeger, a module of its own).
const jaegerBinEnv = "KPROXY_JAEGER_BIN"

// TestTracesReachJaeger: with tracing at ratio 1, a produce and a consume
// through kproxy show up in a real Jaeger (all-in-one, OTLP/HTTP receiver,
// in-memory storage) as spans of service kproxy carrying the messaging
// conventions, kproxy's request attributes and the upstream child span.
func TestTracesReachJaeger(t *testing.T) {
	bin := testkit.ToolBinary(t, jaegerBinEnv, "build Jaeger with `cd test/jaeger && go build -o DIR/jaeger github.com/jaegertracing/jaeger/cmd/jaeger` and point "+jaegerBinEnv+" at it (.ci/run does)")
	ctx := testkit.Context(t, 60*time.Second)
	otlpHTTP, query := startJaeger(t, bin)

	const topic = "traced"
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, topic))
	cfg := testkit.LocalConfig(cluster.ListenAddrs()[0]) + fmt.Sprintf(`
tracing: {enabled: true, endpoint: "http://%s", ratio: 1.0}
`, otlpHTTP)
	kp := kproxytest.Start(t, cfg)

	client, err := kgo.NewClient(kgo.SeedBrokers(kp.BootstrapAddr()), kgo.ClientID("trace-e2e"),
		kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation(), kgo.ConsumeTopics(topic))
	if err != nil {
		t.Fatal(err)
	}
	if err := client.ProduceSync(ctx, &kgo.Record{Value: []byte("traced record")}).FirstErr(); err != nil {
		t.Fatalf("produce through kproxy: %v", err)
	}
	fetches := client.PollRecords(ctx, 1)
	if err := fetches.Err(); err != nil || fetches.NumRecords() != 1 {
		t.Fatalf("consume through kproxy: %d records, %v", fetches.NumRecords(), err)
	}
	client.Close()
	if err := kp.Stop(); err != nil { // flushes the last spans
		t.Fatalf("kproxy stopped with %v", err)
	}

	spans := waitForSpans(ctx, t, query, func(s []jaegerSpan) bool {
		return findSpan(s, "send "+topic) != nil && findSpan(s, "poll "+topic) != nil
	})
	produce := findSpan(spans, "send "+topic)
	for key, want := range map[string]string{
		"messaging.system":           "kafka",
		"messaging.operation.name":   "send",
		"messaging.operation.type":   "send",
		"messaging.destination.name": topic,
		"messaging.client.id":        "trace-e2e",
		"kafka.api.name":             "Produce",
		"kafka.api.key":              "0",
		"kproxy.listener":            "",
		"kproxy.local":               "false",
		"span.kind":                  "server",
	} {
		got, ok := produce.tag(key)
		if !ok || want != "" && got != want {
			t.Errorf("produce span tag %s = %q (present %v), want %q", key, got, ok, want)
		}
	}
	for _, key := range []string{"kafka.api.version", "kafka.correlation_id", "kproxy.node_id", "kproxy.request.bytes", "kproxy.response.bytes", "kproxy.in_proxy_us", "kproxy.upstream_us", "client.address"} {
		if _, ok := produce.tag(key); !ok {
			t.Errorf("produce span has no tag %s", key)
		}
	}
	if b, _ := produce.tag("kproxy.request.bytes"); b == "0" {
		t.Errorf("produce span kproxy.request.bytes = 0")
	}
	if fetch := findSpan(spans, "poll "+topic); fetch != nil {
		if v, _ := fetch.tag("messaging.operation.type"); v != "receive" {
			t.Errorf("fetch span messaging.operation.type = %q, want receive", v)
		}
	}
	// The in-proxy / upstream split: an "upstream" child inside the
	// request span, and the request span's events at its ends.
	up := childOf(spans, produce, "upstream")
	if up == nil {
		t.Fatalf("produce span %s has no upstream child span", produce.SpanID)
	}
	if up.StartTime < produce.StartTime || up.StartTime+up.Duration > produce.StartTime+produce.Duration {
		t.Errorf("upstream span [%d, +%d] is not inside the request span [%d, +%d]", up.StartTime, up.Duration, produce.StartTime, produce.Duration)
	}
	var events []string
	for _, l := range produce.Logs {
		for _, f := range l.Fields {
			if f.Key == "event" {
				events = append(events, fmt.Sprint(f.Value))
			}
		}
	}
	if strings.Join(events, ",") != "sent upstream,upstream first byte" {
		t.Errorf("produce span events %q, want sent upstream, upstream first byte", events)
	}
}

// startJaeger runs Jaeger all-in-one on loopback ports the OS chose, with
// in-memory storage, and returns its OTLP/HTTP receiver's and its query
// API's addresses once the query API answers.
func startJaeger(t *testing.T, bin string) (otlpHTTP, query string) {
	t.Helper()
	ports := freePorts(t, 4)
	otlpHTTP, query = ports[0], ports[2]
	config := fmt.Sprintf(`
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces: {receivers: [otlp], processors: [batch], exporters: [jaeger_storage_exporter]}
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
extensions:
  jaeger_query:
    storage: {traces: memstore}
    http: {endpoint: "%s"}
    grpc: {endpoint: "%s"}
  jaeger_storage:
    backends:
      memstore: {memory: {max_traces: 10000}}
receivers:
  otlp:
    protocols:
      http: {endpoint: "%s"}
      grpc: {endpoint: "%s"}
processors:
  batch: {timeout: 100ms}
exporters:
  jaeger_storage_exporter: {trace_storage: memstore}
`, query, ports[3], otlpHTTP, ports[1])
	path := testkit.WriteFile(t, "jaeger.yaml", config)
	cmd := exec.Command(bin, "--config", path)
	// Jaeger's own spans would go to the default OTLP port.
	cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=none", "OTEL_SDK_DISABLED=true")
	logs := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start jaeger: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("jaeger log:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("jaeger exited: %v\n%s", err, logs.String())
		default:
		}
		if resp, err := http.Get("http://" + query + "/api/services"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return otlpHTTP, query
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger's query API %s did not answer in 30s\n%s", query, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freePorts returns n loopback addresses, one run of free ports, for
// Jaeger to bind.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	base := testkit.FreePortRun(t, "127.0.0.1", n)
	var addrs []string
	for i := range n {
		addrs = append(addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(base+i)))
	}
	return addrs
}

// jaegerSpan is a span as Jaeger's query API (/api/traces) returns it.
type jaegerSpan struct {
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	StartTime int64 `json:"startTime"` // µs
	Duration  int64 `json:"duration"`  // µs
	Tags      []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
	Logs []struct {
		Fields []struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		} `json:"fields"`
	} `json:"logs"`
}

func (s *jaegerSpan) tag(key string) (string, bool) {
	for _, tag := range s.Tags {
		if tag.Key == key {
			return fmt.Sprint(tag.Value), true
		}
	}
	return "", false
}

func findSpan(spans []jaegerSpan, name string) *jaegerSpan {
	for i := range spans {
		if spans[i].OperationName == name {
			return &spans[i]
		}
	}
	return nil
}

func childOf(spans []jaegerSpan, parent *jaegerSpan, name string) *jaegerSpan {
	for i := range spans {
		for _, ref := range spans[i].References {
			if ref.RefType == "CHILD_OF" && ref.SpanID == parent.SpanID && spans[i].OperationName == name {
				return &spans[i]
			}
		}
	}
	return nil
}

// waitForSpans polls Jaeger for service kproxy's spans until done holds
// for them (Jaeger stores what it receives in batches).
func waitForSpans(ctx context.Context, t *testing.T, query string, done func([]jaegerSpan) bool) []jaegerSpan {
	t.Helper()
	var spans []jaegerSpan
	for {
		spans = querySpans(t, query)
		if done(spans) {
			return spans
		}
		select {
		case <-ctx.Done():
			var names []string
			for _, s := range spans {
				names = append(names, s.OperationName)
			}
			t.Fatalf("Jaeger has %d spans of service kproxy (%q), not the produce and fetch spans", len(spans), names)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func querySpans(t *testing.T, query string) []jaegerSpan {
	resp, err := http.Get("http://" + query + "/api/traces?service=kproxy&limit=1000&lookback=1h")
	if err != nil {
		t.Fatalf("jaeger query: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		Data []struct {
			Spans []jaegerSpan `json:"spans"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK {
		return nil // no trace of the service yet
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("jaeger query: %v", err)
	}
	var spans []jaegerSpan
	for _, tr := range body.Data {
		spans = append(spans, tr.Spans...)
	}
	return spans
}
