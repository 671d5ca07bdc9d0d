package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
	"github.com/kproxy/kproxy/proxy"
)

// TestShutdownStopsDiscovery: once Shutdown has returned (and the Start
// context is cancelled), kproxy does nothing more: in particular its
// start-up discovery of an unreachable upstream has stopped and no longer
// logs. (A goroutine that outlives Shutdown also makes any test that logs
// through testing.T panic with "Log in goroutine after Test has completed".)
func TestShutdownStopsDiscovery(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse(strings.NewReader(`
upstream: {bootstrap_servers: ["` + blackhole(t) + `"], dial_timeout: 1s}
listeners: {bind_host: 127.0.0.1, bootstrap_port: 0}
log: {level: warn}
`))
	if err != nil {
		t.Fatal(err)
	}
	logs := &logbuf.Buffer{}
	srv := proxy.New(cfg, zerolog.New(logs).Level(zerolog.WarnLevel), prometheus.NewRegistry())
	ctx, cancel := context.WithCancel(context.Background())
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // discovery is now blocked dialing
	cancel()
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	after := len(logs.Bytes())
	time.Sleep(1500 * time.Millisecond)
	for _, l := range strings.SplitAfter(string(logs.Bytes()[after:]), "\n") {
		if l != "" {
			t.Errorf("logged after Shutdown returned: %s", strings.TrimSpace(l))
		}
	}
}
