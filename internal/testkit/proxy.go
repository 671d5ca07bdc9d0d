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

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/proxy"
)

// StartProxy starts kproxy in front of the given bootstrap servers, with
// extraYAML appended to the generated configuration (for limits and the
// like), and waits until it is ready. It is shut down when the test ends.
func StartProxy(t testing.TB, bootstrap []string, extraYAML string) *Proxy {
	t.Helper()
	return start(t, generatedConfig(bootstrap, 5*time.Second, extraYAML), startOptions{wait: true})
}

// StartProxyWith is StartProxy with proxy options, for tests of features
// that plug into the engine as filters.
func StartProxyWith(t testing.TB, bootstrap []string, extraYAML string, opts ...proxy.Option) *Proxy {
	t.Helper()
	return start(t, generatedConfig(bootstrap, 5*time.Second, extraYAML), startOptions{wait: true, opts: opts})
}

// StartProxyNoWait starts kproxy without waiting for readiness, for tests
// whose upstream is unreachable or misbehaves.
func StartProxyNoWait(t testing.TB, bootstrap []string, dialTimeout time.Duration, extraYAML string) *Proxy {
	t.Helper()
	return start(t, generatedConfig(bootstrap, dialTimeout, extraYAML), startOptions{})
}

// StartProxyConfig starts kproxy from a whole configuration file's text
// (for tests that need sections StartProxy generates, such as listeners),
// with proxy options, and waits until it is ready.
func StartProxyConfig(t testing.TB, yaml string, opts ...proxy.Option) *Proxy {
	t.Helper()
	return start(t, yaml, startOptions{wait: true, opts: opts})
}

// StartProxyConfigLog is StartProxyConfig with kproxy's log written to w
// at level, for tests that assert what kproxy logs.
func StartProxyConfigLog(t testing.TB, yaml string, w io.Writer, level zerolog.Level, opts ...proxy.Option) *Proxy {
	t.Helper()
	return start(t, yaml, startOptions{wait: true, opts: opts, log: w, level: level})
}

// StartProxyConfigLogUnready is StartProxyConfigLog without waiting for
// readiness, for a kproxy that is not meant to become ready (its upstream
// login fails, say).
func StartProxyConfigLogUnready(t testing.TB, yaml string, w io.Writer, level zerolog.Level, opts ...proxy.Option) *Proxy {
	t.Helper()
	return start(t, yaml, startOptions{opts: opts, log: w, level: level})
}

// startOptions say how a test kproxy starts; the zero value logs warnings
// to the test and does not wait for readiness.
type startOptions struct {
	wait  bool
	opts  []proxy.Option
	log   io.Writer // nil: the test's log
	level zerolog.Level
}

func generatedConfig(bootstrap []string, dialTimeout time.Duration, extraYAML string) string {
	return fmt.Sprintf(`
upstream:
  bootstrap_servers: ["%s"]
  dial_timeout: %s
listeners:
  bind_host: 127.0.0.1
  bootstrap_port: 0
  broker_port_base: 0
log: {level: warn}
%s`, strings.Join(bootstrap, `", "`), dialTimeout, extraYAML)
}

func start(t testing.TB, yaml string, so startOptions) *Proxy {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(yaml))
	if err != nil {
		t.Fatalf("kproxy config: %v", err)
	}
	out, level := so.log, so.level
	if out == nil {
		// Nothing may log to a finished test; this cleanup is registered
		// first, so it runs after Shutdown.
		w := &guardedWriter{w: zerolog.NewTestWriter(t)}
		t.Cleanup(w.stop)
		out, level = w, zerolog.WarnLevel
	}
	reg := prometheus.NewRegistry()
	log := zerolog.New(out).Level(level).With().Timestamp().Logger()
	srv := proxy.New(cfg, log, reg, so.opts...)
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

// guardedWriter drops writes once stopped: a test writer must not be used
// after its test ends.
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
