package proxy

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/engine"
	"github.com/kproxy/kproxy/internal/tracing"
)

// tracingFlushTimeout bounds exporting the last spans at shutdown.
const tracingFlushTimeout = 5 * time.Second

// requestTracing is the tracer of the tracing section; nil when it is off.
type requestTracing struct {
	tracer *tracing.Tracer
	log    zerolog.Logger
}

func startTracing(cfg config.Tracing, reg prometheus.Registerer, log zerolog.Logger) (*requestTracing, error) {
	if !cfg.Enabled {
		return nil, nil
	}
	tracer, err := tracing.New(cfg, reg)
	if err != nil {
		return nil, err
	}
	log.Info().Str("endpoint", cfg.Endpoint).Float64("ratio", *cfg.Ratio).Str("service", cfg.ServiceName).Msg("request tracing on (OTLP/HTTP)")
	return &requestTracing{tracer: tracer, log: log}, nil
}

// options is what the proxy needs to trace requests: the observer, and
// the filter that learns topic names from Metadata responses.
func (t *requestTracing) options() []engine.Option {
	if t == nil {
		return nil
	}
	return []engine.Option{engine.WithRequestObservers(t.tracer), engine.WithFilters(t.tracer)}
}

// stop flushes the spans still queued, after the proxy stopped.
func (t *requestTracing) stop() {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), tracingFlushTimeout)
	defer cancel()
	if err := t.tracer.Shutdown(ctx); err != nil {
		t.log.Warn().Err(err).Msg("tracing: flushing the last spans failed")
	}
}
