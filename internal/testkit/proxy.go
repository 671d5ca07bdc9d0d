package testkit

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/engine"
)

// Engine says how StartEngine starts the engine alone.
type Engine struct {
	// YAML is the configuration file's text (Config builds the usual one).
	YAML string
	// Options plug parts into the engine: the part a test is about.
	Options []engine.Option
	// Log receives the engine's log at Level; nil: warnings to the test's
	// log.
	Log   io.Writer
	Level zerolog.Level
	// Unready returns once the listeners are bound, without waiting for
	// readiness: for an upstream that is unreachable or misbehaves.
	Unready bool
}

// StartEngine starts the engine (engine.New) alone from e, without the
// wiring kproxy's start-up adds (the policy, audit, quotas, virtual
// clusters, tracing): for tests and benchmarks of the engine or of one
// part plugged into it. Everything else starts kproxy as the kproxy
// command does, with kproxytest.Start. It waits until the engine is ready
// unless e.Unready; the engine is shut down when the test ends.
func StartEngine(t testing.TB, e Engine) *Proxy {
	t.Helper()
	return start(t, e.YAML, startOptions{wait: !e.Unready, opts: e.Options, log: e.Log, level: e.Level})
}

// startOptions say how a test kproxy starts; the zero value logs warnings
// to the test and does not wait for readiness.
type startOptions struct {
	wait  bool
	opts  []engine.Option
	log   io.Writer // nil: the test's log
	level zerolog.Level
}

func start(t testing.TB, yaml string, so startOptions) *Proxy {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(yaml))
	if err != nil {
		t.Fatalf("kproxy config: %v", err)
	}
	out, level := so.log, so.level
	if out == nil {
		// Registered first, so the writer outlives Shutdown.
		out, level = TestWriter(t), zerolog.WarnLevel
	}
	reg := prometheus.NewRegistry()
	log := zerolog.New(out).Level(level).With().Timestamp().Logger()
	srv := engine.New(cfg, log, reg, so.opts...)
	ctx, cancel := context.WithCancel(context.Background())
	if err := srv.Start(ctx); err != nil {
		cancel()
		t.Fatalf("start kproxy: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		srv.Shutdown(sctx)
	})
	if so.wait {
		wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
		defer wcancel()
		if err := srv.WaitReady(wctx); err != nil {
			t.Fatalf("kproxy not ready: %v", err)
		}
	}
	return &Proxy{Server: srv, Registry: reg, Config: cfg}
}
