package tracing

import (
	"context"
	"math"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/engine"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/wire"
)

func tracingConfig(ratio float64, queue int) config.Tracing {
	return config.Tracing{Enabled: true, Ratio: &ratio, ServiceName: "kproxy", QueueSize: queue}
}

func newTestTracer(t testing.TB, cfg config.Tracing, exporter sdktrace.SpanExporter) (*Tracer, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	tr, err := NewWithExporter(cfg, exporter, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Shutdown(context.Background()) })
	return tr, reg
}

func TestSampleRequestKeepsTheRatio(t *testing.T) {
	const draws = 200_000
	for _, ratio := range []float64{0, 0.01, 0.1, 0.5, 1} {
		tr, _ := newTestTracer(t, tracingConfig(ratio, 8), tracetest.NewInMemoryExporter())
		sampled := 0
		for range draws {
			if tr.SampleRequest(wire.ProduceKey, 9) {
				sampled++
			}
		}
		got := float64(sampled) / draws
		// 5 standard deviations of a binomial share, so a correct sampler
		// fails about once in 3.5 million runs.
		slack := 5 * math.Sqrt(ratio*(1-ratio)/draws)
		if got < ratio-slack || got > ratio+slack {
			t.Errorf("ratio %v: sampled %d of %d (%.4f), want %.4f ± %.4f", ratio, sampled, draws, got, ratio, slack)
		}
	}
}

// memoryExporter keeps the spans past Shutdown (the SDK's in-memory
// exporter forgets them there).
type memoryExporter struct{ *tracetest.InMemoryExporter }

func newMemoryExporter() memoryExporter { return memoryExporter{tracetest.NewInMemoryExporter()} }

func (memoryExporter) Shutdown(context.Context) error { return nil }

// stalledExporter holds every export until release is closed, as an
// unreachable collector does until its timeout.
type stalledExporter struct {
	release chan struct{}
	mu      sync.Mutex
	spans   int
}

func (e *stalledExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	<-e.release
	e.mu.Lock()
	e.spans += len(spans)
	e.mu.Unlock()
	return nil
}

func (e *stalledExporter) Shutdown(context.Context) error { return nil }

func TestFullQueueDropsAndCountsInsteadOfBlocking(t *testing.T) {
	exporter := &stalledExporter{release: make(chan struct{})}
	tr, reg := newTestTracer(t, tracingConfig(1, 4), exporter)
	const requests = 1000
	observed := make(chan struct{})
	go func() {
		defer close(observed)
		now := time.Now()
		for i := range requests {
			tr.ObserveRequest(&engine.RequestTiming{Key: wire.MetadataKey, CorrelationID: int32(i), Start: now, Done: now, Local: true, Sampled: true, ErrorCode: -1})
		}
	}()
	select {
	case <-observed:
	case <-time.After(20 * time.Second):
		close(exporter.release)
		t.Fatal("ObserveRequest blocked behind a stalled exporter")
	}
	dropped := testkit.MetricValue(t, reg, "kproxy_trace_spans_dropped_total")
	if dropped == 0 {
		t.Fatal("kproxy_trace_spans_dropped_total is 0 after 1000 requests behind a stalled exporter with a queue of 4")
	}
	close(exporter.release)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	exporter.mu.Lock()
	defer exporter.mu.Unlock()
	if got := float64(exporter.spans) + dropped; got != requests {
		t.Errorf("exported %d + dropped %v = %v spans, want %d: every request is exported or counted", exporter.spans, dropped, got, requests)
	}
}

func TestUnsampledRequestIsNotExported(t *testing.T) {
	exporter := newMemoryExporter()
	tr, _ := newTestTracer(t, tracingConfig(1, 8), exporter)
	now := time.Now()
	tr.ObserveRequest(&engine.RequestTiming{Key: wire.MetadataKey, Start: now, Done: now, ErrorCode: -1})
	tr.Shutdown(context.Background())
	if n := len(exporter.GetSpans()); n != 0 {
		t.Errorf("%d spans exported for a request the sampler did not choose", n)
	}
}

func TestSpanFromRequestTiming(t *testing.T) {
	exporter := newMemoryExporter()
	tr, _ := newTestTracer(t, tracingConfig(1, 8), exporter)
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	rt := engine.RequestTiming{
		Key: wire.ProduceKey, Version: 9, CorrelationID: 42, NodeID: 2, Listener: "node-2",
		ClientID: "billing", Principal: "alice", VirtualCluster: "team-a", Client: netip.MustParseAddrPort("127.0.0.7:40000"),
		RequestBytes: 1100, ResponseBytes: 90,
		Start:             start,
		SentUpstream:      start.Add(100 * time.Microsecond),
		UpstreamFirstByte: start.Add(2100 * time.Microsecond),
		Done:              start.Add(2150 * time.Microsecond),
		ErrorCode:         29, // TOPIC_AUTHORIZATION_FAILED
		Sampled:           true, Topic: "orders",
	}
	tr.ObserveRequest(&rt)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := exporter.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want the request's and its upstream child", len(spans))
	}
	var req, up tracetest.SpanStub
	for _, s := range spans {
		if s.Name == "upstream" {
			up = s
		} else {
			req = s
		}
	}
	if req.Name != "send orders" || req.SpanKind != trace.SpanKindServer {
		t.Errorf("request span %q kind %v, want \"send orders\" server", req.Name, req.SpanKind)
	}
	if !req.StartTime.Equal(rt.Start) || !req.EndTime.Equal(rt.Done) {
		t.Errorf("request span %v-%v, want %v-%v", req.StartTime, req.EndTime, rt.Start, rt.Done)
	}
	if up.Parent.SpanID() != req.SpanContext.SpanID() || !up.StartTime.Equal(rt.SentUpstream) || !up.EndTime.Equal(rt.UpstreamFirstByte) {
		t.Errorf("upstream span parent %v %v-%v, want child of %v over %v-%v", up.Parent.SpanID(), up.StartTime, up.EndTime,
			req.SpanContext.SpanID(), rt.SentUpstream, rt.UpstreamFirstByte)
	}
	want := map[attribute.Key]attribute.Value{
		"messaging.system":           attribute.StringValue("kafka"),
		"messaging.operation.name":   attribute.StringValue("send"),
		"messaging.operation.type":   attribute.StringValue("send"),
		"messaging.destination.name": attribute.StringValue("orders"),
		"messaging.client.id":        attribute.StringValue("billing"),
		"kafka.api.key":              attribute.Int64Value(0),
		"kafka.api.name":             attribute.StringValue("Produce"),
		"kafka.api.version":          attribute.Int64Value(9),
		"kafka.correlation_id":       attribute.Int64Value(42),
		"kafka.error_code":           attribute.Int64Value(29),
		"error.type":                 attribute.StringValue("TOPIC_AUTHORIZATION_FAILED"),
		"kproxy.listener":            attribute.StringValue("node-2"),
		"kproxy.node_id":             attribute.Int64Value(2),
		"kproxy.principal":           attribute.StringValue("alice"),
		"kproxy.virtual_cluster":     attribute.StringValue("team-a"),
		"kproxy.request.bytes":       attribute.Int64Value(1100),
		"kproxy.response.bytes":      attribute.Int64Value(90),
		"kproxy.local":               attribute.BoolValue(false),
		"kproxy.in_proxy_us":         attribute.Int64Value(150),
		"kproxy.upstream_us":         attribute.Int64Value(2000),
		"client.address":             attribute.StringValue("127.0.0.7"),
		"client.port":                attribute.Int64Value(40000),
	}
	got := map[attribute.Key]attribute.Value{}
	for _, kv := range req.Attributes {
		got[kv.Key] = kv.Value
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("attribute %s = %v, want %v", k, got[k].Emit(), v.Emit())
		}
	}
	if req.Status.Code != 1 { // codes.Error
		t.Errorf("status %v, want Error for error code 29", req.Status)
	}
	var events []string
	for _, e := range req.Events {
		events = append(events, e.Name)
	}
	if len(events) != 2 || !req.Events[0].Time.Equal(rt.SentUpstream) || !req.Events[1].Time.Equal(rt.UpstreamFirstByte) {
		t.Errorf("events %q, want \"sent upstream\" at %v and \"upstream first byte\" at %v", events, rt.SentUpstream, rt.UpstreamFirstByte)
	}
}

func TestLocalAnswerHasNoUpstreamSpan(t *testing.T) {
	exporter := newMemoryExporter()
	tr, _ := newTestTracer(t, tracingConfig(1, 8), exporter)
	start := time.Now()
	tr.ObserveRequest(&engine.RequestTiming{Key: wire.APIVersionsKey, Version: 3, Start: start, Done: start.Add(time.Millisecond), Local: true, Sampled: true, ErrorCode: -1})
	tr.Shutdown(context.Background())
	spans := exporter.GetSpans()
	if len(spans) != 1 || spans[0].Name != "ApiVersions" {
		t.Fatalf("spans %v, want one ApiVersions span", spans)
	}
	for _, kv := range spans[0].Attributes {
		if kv.Key == "kproxy.in_proxy_us" && kv.Value.AsInt64() != 1000 || kv.Key == "kproxy.upstream_us" && kv.Value.AsInt64() != 0 {
			t.Errorf("%s = %d, want in-proxy 1000 µs, upstream 0", kv.Key, kv.Value.AsInt64())
		}
	}
}

// TestTopicIDNamedFromMetadata: Produce and Fetch v13+ name topics by id;
// the span gets the name from a Metadata response kproxy relayed.
func TestTopicIDNamedFromMetadata(t *testing.T) {
	exporter := newMemoryExporter()
	tr, _ := newTestTracer(t, tracingConfig(1, 8), exporter)
	id := [16]byte{9: 1}
	meta := kmsg.NewPtrMetadataResponse()
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic, mt.TopicID = kmsg.StringPtr("orders"), id
	meta.Topics = append(meta.Topics, mt)
	var reg filter.Registry
	tr.Register(&reg)
	for _, h := range reg.Responses() {
		if err := h.Handle(meta); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	tr.ObserveRequest(&engine.RequestTiming{Key: wire.FetchKey, Version: 17, Start: now, Done: now, ErrorCode: -1, Local: true, Sampled: true, TopicID: id})
	tr.Shutdown(context.Background())
	if spans := exporter.GetSpans(); len(spans) != 1 || spans[0].Name != "poll orders" {
		t.Fatalf("spans %v, want one \"poll orders\"", spans)
	}
}
