package engine

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"
)

// bootstrapGate owns the port-per-broker bootstrap listener and keeps it
// closed while every upstream bootstrap server is known unreachable, so
// that a client connecting to it is refused (ECONNREFUSED) as it would be
// by a dead cluster, instead of completing the TCP handshake and being
// dropped at its first request: a client that sees an accepted connection
// closed blames its own security settings (librdkafka suggests checking
// security.protocol), one refused counts a failed attempt and backs off.
// It reopens on the same port as soon as a server is reachable again.
type bootstrapGate struct {
	mu sync.Mutex
	// addr is the bound address, to reopen on the same port (the port
	// the configuration gave, or the one the system chose for port 0).
	addr string
	// bound is the address the first bind reported, for BootstrapAddr and
	// the log lines (the same as the "listening" line's).
	bound string
	ln    net.Listener // nil while closed
	// shut: Shutdown closed it for good.
	shut bool
	// retrying: a goroutine retries a reopen that failed.
	retrying bool
	// closedLogs and reopenedLogs let through at most one line each per
	// log.sample: a bootstrap server that accepts the probe but fails
	// real dials would otherwise flap the listener, and log, at the
	// probe rate.
	closedLogs, reopenedLogs logSampler
}

// openBootstrap binds the bootstrap listener at addr; serveBootstrap
// starts serving it.
func (l *portPerBroker) openBootstrap(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listeners.bootstrap_port: bootstrap listener on %s: %w", addr, err)
	}
	s, g := l.s, &l.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ln, g.bound = ln, ln.Addr().String()
	g.closedLogs = logSampler{interval: s.cfg.Log.Sample}
	g.reopenedLogs = logSampler{interval: s.cfg.Log.Sample}
	s.metrics.bootstrapOpen.Set(1)
	g.addr = net.JoinHostPort(s.cfg.Listeners.BindHost, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	s.log.Info().Str("listener", "bootstrap").Str("addr", ln.Addr().String()).Msg("listening")
	return nil
}

// serveBootstrap starts the accept loop of the listener openBootstrap bound.
func (l *portPerBroker) serveBootstrap() {
	g := &l.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ln != nil {
		l.s.serveListener(g.ln, bootstrapNode, listenerName(bootstrapNode), l)
	}
}

// closeBootstrap closes the bootstrap listener for good.
func (l *portPerBroker) closeBootstrap() {
	s, g := l.s, &l.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shut = true
	if g.ln != nil {
		g.ln.Close()
		g.ln = nil
	}
	s.metrics.bootstrapOpen.Set(0)
}

// BootstrapAddr is the bound address of the bootstrap listener, "" when
// listeners.port_per_broker is false.
func (s *Server) BootstrapAddr() string {
	l, ok := listenerOf[*portPerBroker](s)
	if !ok {
		return ""
	}
	g := &l.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.bound
}

// allBootstrapDown reports whether every upstream bootstrap server is
// known unreachable.
func (s *Server) allBootstrapDown() bool {
	servers := s.cfg.Upstream.BootstrapServers
	if len(servers) == 0 {
		return false
	}
	for _, a := range servers {
		if !s.health.down(a) {
			return false
		}
	}
	return true
}

// bootstrapFollow closes or reopens the bootstrap listener as the health
// of the upstream bootstrap servers says; addr is the upstream address
// whose health changed.
func (l *portPerBroker) bootstrapFollow(addr string) {
	s, g := l.s, &l.gate
	if !slices.Contains(s.cfg.Upstream.BootstrapServers, addr) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut || g.addr == "" {
		return
	}
	down := s.allBootstrapDown()
	switch {
	case down && g.ln != nil:
		g.ln.Close()
		g.ln = nil
		s.metrics.bootstrapOpen.Set(0)
		if ok, suppressed := g.closedLogs.allow(time.Now()); ok {
			s.log.Warn().Str("listener", "bootstrap").Str("addr", g.bound).
				Strs("upstreams", s.cfg.Upstream.BootstrapServers).Int("suppressed", suppressed).
				Msg("bootstrap listener refuses connections: no upstream bootstrap server is reachable; it reopens when one is")
		}
	case !down && g.ln == nil:
		if err := l.reopenBootstrap(); err != nil {
			s.log.Error().Err(err).Str("listener", "bootstrap").
				Str("retry_in", durationText(s.cfg.Upstream.ReconnectBackoffMax)).
				Msg("bootstrap listener not reopened; retrying")
			l.retryBootstrap()
		}
	}
}

// reopenBootstrap binds the bootstrap listener again on its port. gate.mu held.
func (l *portPerBroker) reopenBootstrap() error {
	s, g := l.s, &l.gate
	ln, err := net.Listen("tcp", g.addr)
	if err != nil {
		return fmt.Errorf("reopen bootstrap listener on %s: %w", g.addr, err)
	}
	g.ln = ln
	s.metrics.bootstrapOpen.Set(1)
	if ok, suppressed := g.reopenedLogs.allow(time.Now()); ok {
		s.log.Info().Str("listener", "bootstrap").Str("addr", g.bound).Int("suppressed", suppressed).
			Msg("bootstrap listener accepting again: an upstream bootstrap server is reachable")
	}
	s.serveListener(ln, bootstrapNode, listenerName(bootstrapNode), l)
	return nil
}

// retryBootstrap retries, once per reconnect_backoff_max, a reopen that
// failed (another process took the port while it was closed) until it
// succeeds, the servers are down again, or kproxy stops. gate.mu held.
func (l *portPerBroker) retryBootstrap() {
	s, g := l.s, &l.gate
	if g.retrying {
		return
	}
	g.retrying = s.health.goBackground(func(ctx context.Context) {
		t := time.NewTicker(s.cfg.Upstream.ReconnectBackoffMax)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			g.mu.Lock()
			done := ctx.Err() != nil || g.shut || g.ln != nil || s.allBootstrapDown() || l.reopenBootstrap() == nil
			if done {
				g.retrying = false
			}
			g.mu.Unlock()
			if done {
				return
			}
		}
	})
}

// probeBootstrapServers dials every upstream bootstrap server once, in the
// background, and records the outcome: if none answers at start, the
// bootstrap listener closes at once instead of after a client's connection
// found out.
func (s *Server) probeBootstrapServers() {
	for _, addr := range s.cfg.Upstream.BootstrapServers {
		s.health.goBackground(func(ctx context.Context) {
			s.health.record(addr, bootstrapNode, s.probeUpstream(ctx, addr, bootstrapNode))
		})
	}
}
