package testkit

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/config"
	"github.com/kproxy/kproxy/proxy"
)

// StartProxyNoWait is StartProxy without the wait for readiness: it returns
// as soon as the bootstrap listener is bound, for tests of a kproxy whose
// upstream is not (yet) reachable. dialTimeout is upstream.dial_timeout.
func StartProxyNoWait(t testing.TB, bootstrap []string, dialTimeout time.Duration, extraYAML string) *Proxy {
	t.Helper()
	yaml := fmt.Sprintf(`
upstream:
  bootstrap_servers: ["%s"]
  dial_timeout: %s
listeners:
  bind_host: 127.0.0.1
  bootstrap_port: 0
  broker_port_base: 0
log: {level: warn}
%s`, strings.Join(bootstrap, `", "`), dialTimeout, extraYAML)
	cfg, err := config.Parse(strings.NewReader(yaml))
	if err != nil {
		t.Fatalf("kproxy config: %v", err)
	}
	reg := prometheus.NewRegistry()
	// t.Log after the test ends panics; should anything in kproxy outlive
	// Shutdown and log (as its start-up discovery once did, see
	// e2e.TestShutdownStopsDiscovery), it is dropped, not a panic.
	w := &guardedWriter{w: zerolog.NewTestWriter(t)}
	t.Cleanup(w.stop) // registered first, so it runs after Shutdown
	log := zerolog.New(w).Level(zerolog.WarnLevel)
	srv := proxy.New(cfg, log, reg)
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
	return &Proxy{Server: srv, Registry: reg, Config: cfg}
}

// guardedWriter forwards writes until stop is called, then drops them.
type guardedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	stopped bool
}

func (g *guardedWriter) Write(b []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return len(b), nil
	}
	return g.w.Write(b)
}

func (g *guardedWriter) stop() {
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
}
