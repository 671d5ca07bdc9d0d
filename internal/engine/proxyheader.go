package engine

import (
	"net"
	"sync"
	"time"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/proxyproto"
)

// reasonProxyProtocol: the connection's PROXY protocol header was missing,
// malformed, late, or sent by an untrusted peer.
const reasonProxyProtocol = "proxy_protocol"

// proxyHeaders reads load balancers' PROXY headers off accepted
// connections (listeners.proxy_protocol) and tracks the connections whose
// header is still awaited, so that Shutdown need not wait out their
// deadline.
type proxyHeaders struct {
	acceptor *proxyproto.Acceptor // nil: mode off

	mu      sync.Mutex
	waiting map[net.Conn]struct{}
	closed  bool
}

func newProxyHeaders(cfg *config.Config) *proxyHeaders {
	pp := cfg.Listeners.ProxyProtocol
	h := &proxyHeaders{waiting: map[net.Conn]struct{}{}}
	if !pp.Enabled() {
		return h
	}
	mode := proxyproto.Optional
	if pp.Mode == config.ProxyProtocolRequired {
		mode = proxyproto.Required
	}
	// The header is the first step of a client's handshake: it gets the
	// same time as the TLS handshake after it.
	h.acceptor = proxyproto.NewAcceptor(mode, pp.TrustedPrefixes(), cfg.Limits.HandshakeTimeout)
	return h
}

// acceptProxyHeader returns the connection to serve, or nil when conn was refused
// (closed, logged and counted). Called on the connection's own goroutine:
// a peer that sends half a header holds only that goroutine, until the
// deadline, and counts against the connection limits as admitted (a)
// meanwhile. Once a header names the client, a counts under the client's
// address for limits.max_connections_per_ip.
func (s *Server) acceptProxyHeader(conn net.Conn, a *admission, listener string) net.Conn {
	h := s.proxyHeaders
	if h.acceptor == nil {
		return conn
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		conn.Close()
		return nil
	}
	h.waiting[conn] = struct{}{}
	h.mu.Unlock()

	served, err := h.acceptor.Accept(conn)

	h.mu.Lock()
	delete(h.waiting, conn)
	h.mu.Unlock()
	if err != nil {
		// Sampled: a peer may open connections only to fail them.
		ev := s.log.Debug()
		if ok, suppressed := s.closeLogs.allow(reasonProxyProtocol, time.Now()); ok {
			ev = s.log.Warn().Int("similar_suppressed", suppressed)
		}
		ev.Err(err).Str("peer", conn.RemoteAddr().String()).Str("listener", listener).
			Str("reason", reasonProxyProtocol).Msg("connection refused: PROXY protocol header")
		s.metrics.connsClosed.WithLabelValues(reasonProxyProtocol).Inc()
		conn.Close()
		return nil
	}
	if why := s.readdress(a, addrOf(served.RemoteAddr())); why != "" {
		s.refuseConn(served, listener, reasonLimit, why)
		return nil
	}
	return served
}

// closeWaiting closes every connection whose header is still awaited and
// refuses new ones: kproxy is shutting down.
func (h *proxyHeaders) closeWaiting() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for c := range h.waiting {
		c.Close()
	}
}

// spliceable is the TCP socket under a client connection, when bytes may
// be moved from it with splice(2): a plain TCP connection, or a PROXY
// protocol connection whose bytes read past the header are handed on.
func spliceable(c net.Conn) (*net.TCPConn, bool) {
	switch c := c.(type) {
	case *net.TCPConn:
		return c, true
	case *proxyproto.Conn:
		return c.TCPConn()
	}
	return nil, false
}
