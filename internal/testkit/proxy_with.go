package testkit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/config"
	"github.com/kproxy/kproxy/proxy"
)

// StartProxyWith is StartProxy with proxy options, for tests of features
// that plug into the engine as filters. It waits until kproxy is ready and
// shuts it down when the test ends.
func StartProxyWith(t testing.TB, bootstrap []string, extraYAML string, opts ...proxy.Option) *Proxy {
	t.Helper()
	yaml := fmt.Sprintf(`
upstream:
  bootstrap_servers: ["%s"]
  dial_timeout: 5s
listeners:
  bind_host: 127.0.0.1
  bootstrap_port: 0
  broker_port_base: 0
log: {level: warn}
%s`, strings.Join(bootstrap, `", "`), extraYAML)
	cfg, err := config.Parse(strings.NewReader(yaml))
	if err != nil {
		t.Fatalf("kproxy config: %v", err)
	}
	reg := prometheus.NewRegistry()
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
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
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := srv.WaitReady(wctx); err != nil {
		t.Fatalf("kproxy not ready: %v", err)
	}
	return &Proxy{Server: srv, Registry: reg, Config: cfg}
}
