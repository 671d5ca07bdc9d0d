package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/proxy"
)

// lockedLog collects log lines.
type lockedLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lockedLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, string(b))
	return len(b), nil
}

func (l *lockedLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

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
	logs := &lockedLog{}
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
	after := logs.len()
	time.Sleep(1500 * time.Millisecond)
	logs.mu.Lock()
	defer logs.mu.Unlock()
	for _, l := range logs.lines[after:] {
		t.Errorf("logged after Shutdown returned: %s", strings.TrimSpace(l))
	}
}
