// Package testkit starts the real peers that kproxy's tests drive: a kfake
// cluster and a kproxy server, both on 127.0.0.1 with OS-chosen ports.
package testkit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kproxy/kproxy/config"
	"github.com/kproxy/kproxy/proxy"
)

// Cluster starts a kfake cluster with n brokers (node ids 0..n-1) and
// closes it when the test ends.
func Cluster(t testing.TB, n int, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(n)}, opts...)...)
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// Proxy is a running kproxy for a test.
type Proxy struct {
	*proxy.Server
	Registry *prometheus.Registry
	Config   *config.Config
}

// StartProxy starts kproxy in front of the given bootstrap servers, with
// extraYAML appended to the generated configuration (for limits and the
// like), and waits until it is ready. It is shut down when the test ends.
func StartProxy(t testing.TB, bootstrap []string, extraYAML string) *Proxy {
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
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := srv.WaitReady(wctx); err != nil {
		t.Fatalf("kproxy not ready: %v", err)
	}
	return &Proxy{Server: srv, Registry: reg, Config: cfg}
}

// StartProxyConfig starts kproxy from a whole configuration file's text
// (for tests that need sections StartProxy generates, such as listeners),
// with proxy options, and waits until it is ready.
func StartProxyConfig(t testing.TB, yaml string, opts ...proxy.Option) *Proxy {
	t.Helper()
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
	wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
	defer wcancel()
	if err := srv.WaitReady(wctx); err != nil {
		t.Fatalf("kproxy not ready: %v", err)
	}
	return &Proxy{Server: srv, Registry: reg, Config: cfg}
}
