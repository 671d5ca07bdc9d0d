package testkit

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/config"
	"github.com/kproxy/kproxy/proxy"
)

// StartProxyConfigLog is StartProxyConfig with kproxy's log written to w
// at level (JSON lines, one per event), for tests that assert on what
// kproxy logs. w must be safe for concurrent use; a writer that keeps
// everything (rather than one that calls t.Log) also keeps what is logged
// during the shutdown at the end of the test.
func StartProxyConfigLog(t testing.TB, yaml string, w io.Writer, level zerolog.Level, opts ...proxy.Option) *Proxy {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(yaml))
	if err != nil {
		t.Fatalf("kproxy config: %v", err)
	}
	reg := prometheus.NewRegistry()
	log := zerolog.New(w).Level(level).With().Timestamp().Logger()
	srv := proxy.New(cfg, log, reg, opts...)
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
	wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
	defer wcancel()
	if err := srv.WaitReady(wctx); err != nil {
		t.Fatalf("kproxy not ready: %v", err)
	}
	return &Proxy{Server: srv, Registry: reg, Config: cfg}
}
