package tracing

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/engine"
)

// Tracer is the request observer that exports spans. Its data-path
// methods (SampleRequest, ObserveRequest) never block and allocate nothing
// for a request that is not sampled.
type Tracer struct {
	// sampleBound: a request is sampled when a uniform 64-bit draw is
	// below it; all is set for ratio 1.
	sampleBound uint64
	all         bool

	topics   filter.TopicNames
	queue    chan engine.RequestTiming
	dropped  prometheus.Counter
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// New builds the tracer for cfg, exporting over OTLP/HTTP to
// cfg.Endpoint, and registers its metrics on reg. Shutdown flushes it.
func New(cfg config.Tracing, reg prometheus.Registerer) (*Tracer, error) {
	exporter, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(cfg.Endpoint+"/v1/traces"))
	if err != nil {
		return nil, fmt.Errorf("tracing.endpoint %s: %w", cfg.Endpoint, err)
	}
	return NewWithExporter(cfg, exporter, reg)
}

// NewWithExporter is New with the span exporter given.
func NewWithExporter(cfg config.Tracing, exporter sdktrace.SpanExporter, reg prometheus.Registerer) (*Tracer, error) {
	t := &Tracer{
		queue: make(chan engine.RequestTiming, cfg.QueueSize),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kproxy_trace_spans_dropped_total",
			Help: "Request spans dropped because the export queue (tracing.queue_size) was full.",
		}),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	ratio := *cfg.Ratio
	t.all = ratio >= 1
	t.sampleBound = uint64(ratio * math.MaxUint64)
	if err := reg.Register(t.dropped); err != nil {
		return nil, fmt.Errorf("register tracing metrics: %w", err)
	}
	res := resource.NewSchemaless(semconv.ServiceName(cfg.ServiceName))
	// The sampling decision is taken at the request's header
	// (SampleRequest), so the SDK records every span it is given. The
	// batch processor blocks when its own queue is full: only the span
	// goroutine waits, and the request queue in front of it drops and
	// counts what does not fit.
	t.provider = sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(exporter, sdktrace.WithBlocking(), sdktrace.WithMaxQueueSize(cfg.QueueSize)),
	)
	t.tracer = t.provider.Tracer("github.com/kproxy/kproxy")
	go t.export()
	return t, nil
}

// SampleRequest implements engine.RequestSampler: the head sampling
// decision, at the configured ratio.
func (t *Tracer) SampleRequest(key, version int16) bool {
	return t.all || rand.Uint64() < t.sampleBound
}

// ObserveRequest implements engine.RequestObserver: a sampled request's
// timing is queued for its span, or dropped and counted when the queue is
// full.
func (t *Tracer) ObserveRequest(rt *engine.RequestTiming) {
	if !rt.Sampled {
		return
	}
	select {
	case t.queue <- *rt:
	default:
		t.dropped.Inc()
	}
}

// export turns queued timings into spans until Shutdown, then those
// still queued.
func (t *Tracer) export() {
	defer close(t.done)
	for {
		select {
		case rt := <-t.queue:
			t.record(&rt)
		case <-t.stop:
			for {
				select {
				case rt := <-t.queue:
					t.record(&rt)
				default:
					return
				}
			}
		}
	}
}

// record emits rt's span: the request from its first byte to its
// response's last, with an "upstream" child span for the upstream round
// trip and events where the request left for the upstream and the
// response came back; the rest is time inside kproxy.
func (t *Tracer) record(rt *engine.RequestTiming) {
	if rt.Topic == "" && rt.TopicID != [16]byte{} {
		rt.Topic, _ = t.topics.Lookup(rt.TopicID)
	}
	ctx, span := t.tracer.Start(context.Background(), spanName(rt),
		trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(rt.Start), trace.WithAttributes(attributes(rt)...))
	if upstreamTime(rt) > 0 {
		span.AddEvent("sent upstream", trace.WithTimestamp(rt.SentUpstream))
		_, up := t.tracer.Start(ctx, "upstream", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(rt.SentUpstream))
		up.End(trace.WithTimestamp(rt.UpstreamFirstByte))
		span.AddEvent("upstream first byte", trace.WithTimestamp(rt.UpstreamFirstByte))
	}
	if rt.ErrorCode > 0 {
		span.SetStatus(codes.Error, errorName(rt.ErrorCode))
	}
	span.End(trace.WithTimestamp(rt.Done))
}

// Shutdown stops taking requests, exports what is queued and flushes the
// exporter, within ctx. It belongs after the proxy's Shutdown: spans of
// requests observed later are not exported.
func (t *Tracer) Shutdown(ctx context.Context) error {
	t.stopOnce.Do(func() { close(t.stop) })
	select {
	case <-t.done:
	case <-ctx.Done():
	}
	return t.provider.Shutdown(ctx)
}
