package engine

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/config"
)

// TestDrainBeforeTheRequestLoopArmsItsDeadline: Shutdown may drain a pair
// the accept loop registered whose request loop has not yet armed its idle
// deadline (a loaded machine schedules the new goroutine late). The idle
// deadline must not undo the drain's: the pair ends at once and Shutdown
// returns in time, rather than the pair reading on for limits.idle_timeout.
func TestDrainBeforeTheRequestLoopArmsItsDeadline(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader(`
upstream: {bootstrap_servers: ["127.0.0.1:1"]}
listeners: {bind_host: 127.0.0.1}
limits: {idle_timeout: 1m}
`))
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, zerolog.Nop(), prometheus.NewRegistry())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	p := s.newPair(conn, nil, bootstrapNode, "bootstrap", s.listeners[0]) // registered, not yet running
	if p == nil {
		t.Fatal("pair refused")
	}

	shutdown := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		shutdown <- s.Shutdown(ctx)
	}()
	for deadline := time.Now().Add(3 * time.Second); !p.draining.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Shutdown did not drain the registered pair")
		}
	}
	go p.run() // only now: it arms its idle deadline after the drain

	select {
	case err := <-shutdown:
		if err != nil {
			t.Errorf("Shutdown: %v; want the drained pair to end at once", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return")
	}
	client.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := client.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Errorf("client read after shutdown: %v, want the connection closed", err)
	}
}
