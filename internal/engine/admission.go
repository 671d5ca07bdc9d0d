package engine

import (
	"net"
	"net/netip"
	"time"
)

// reasonHandshakeLimit: the connection was refused at accept because
// limits.max_handshakes connections were still in their handshake.
const reasonHandshakeLimit = "handshake_limit"

// admission is one accepted connection's place under the connection
// limits, from accept until it closes: it counts against
// limits.max_connections and limits.max_connections_per_ip from the start
// (as Kafka's max.connections and HAProxy's maxconn count a socket, not a
// session), and against limits.max_handshakes until its PROXY header, TLS
// handshake and SASL authentication are all through. Its fields are
// guarded by the Server's mu.
type admission struct {
	listener string
	// ip is the address the connection counts under in perIP: the TCP
	// peer's, then the client's a PROXY header names.
	ip          netip.Addr
	handshaking bool
	released    bool
}

// admit counts conn, just accepted on listener, under the connection
// limits, or closes it unread if a limit is reached (logged, sampled, and
// counted in kproxy_connections_closed_total) and returns nil. It runs on
// the accept loop: a refused connection costs no goroutine.
func (s *Server) admit(conn net.Conn, listener string) *admission {
	ip := addrOf(conn.RemoteAddr())
	s.mu.Lock()
	if s.draining {
		s.mu.Unlock()
		conn.Close()
		return nil
	}
	reason, why := s.admissionRefusal(ip)
	if reason != "" {
		s.mu.Unlock()
		s.refuseConn(conn, listener, reason, why)
		return nil
	}
	a := &admission{listener: listener, ip: ip, handshaking: true}
	s.open++
	s.handshakes++
	s.perIP[ip]++
	s.mu.Unlock()
	s.metrics.connsActive.WithLabelValues(listener).Inc()
	s.metrics.handshaking.Inc()
	return a
}

// admissionRefusal is the reason label and message for refusing a new
// connection from ip, or "" to admit it. s.mu held.
func (s *Server) admissionRefusal(ip netip.Addr) (reason, why string) {
	lim := s.cfg.Limits.ConnectionLimits
	switch {
	case lim.MaxConnections > 0 && s.open >= lim.MaxConnections:
		return reasonLimit, "connection refused: limits.max_connections reached"
	case lim.MaxConnectionsPerIP > 0 && s.perIP[ip] >= lim.MaxConnectionsPerIP:
		return reasonLimit, "connection refused: limits.max_connections_per_ip reached for this address"
	case s.handshakes >= lim.HandshakeLimit():
		return reasonHandshakeLimit, "connection refused: limits.max_handshakes connections are still in their handshake"
	}
	return "", ""
}

// readdress moves a's per-IP count to client, the address a trusted PROXY
// header names, and says why the connection must be refused if client
// has reached limits.max_connections_per_ip ("" if not). The refused
// connection stays counted under its old address until released.
func (s *Server) readdress(a *admission, client netip.Addr) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.ip == client || a.released {
		return ""
	}
	if lim := s.cfg.Limits.MaxConnectionsPerIP; lim > 0 && s.perIP[client] >= lim {
		return "connection refused: limits.max_connections_per_ip reached for the client the PROXY header names"
	}
	s.uncountIP(a.ip)
	a.ip = client
	s.perIP[client]++
	return ""
}

// handshakeDone says a's client is through its handshakes: it no longer
// counts against limits.max_handshakes. Safe to call more than once, and
// with a nil a (a pair built without accept, in tests).
func (s *Server) handshakeDone(a *admission) {
	if a == nil {
		return
	}
	s.mu.Lock()
	done := a.handshaking
	if done {
		a.handshaking = false
		s.handshakes--
	}
	s.mu.Unlock()
	if done {
		s.metrics.handshaking.Dec()
	}
}

// release ends a's counts: the connection is closed. Safe to call more
// than once, and with a nil a.
func (s *Server) release(a *admission) {
	if a == nil {
		return
	}
	s.handshakeDone(a)
	s.mu.Lock()
	if a.released {
		s.mu.Unlock()
		return
	}
	a.released = true
	s.open--
	s.uncountIP(a.ip)
	s.mu.Unlock()
	s.metrics.connsActive.WithLabelValues(a.listener).Dec()
}

// uncountIP takes one connection off ip's count. s.mu held.
func (s *Server) uncountIP(ip netip.Addr) {
	if s.perIP[ip]--; s.perIP[ip] <= 0 {
		delete(s.perIP, ip)
	}
}

// refuseConn closes conn, refused for reason before it was served, with
// a warning sampled per reason and the closed-connections metric.
func (s *Server) refuseConn(conn net.Conn, listener, reason, why string) {
	ev := s.log.Debug()
	if ok, suppressed := s.closeLogs.allow(reason, time.Now()); ok {
		ev = s.log.Warn().Int("similar_suppressed", suppressed)
	}
	ev.Str("client", conn.RemoteAddr().String()).Str("listener", listener).Str("reason", reason).Msg(why)
	s.metrics.connsClosed.WithLabelValues(reason).Inc()
	conn.Close()
}

// addrOf is the IP address of a connection's remote address, IPv4 in
// IPv6 unmapped so that one client counts once.
func addrOf(a net.Addr) netip.Addr {
	ap, _ := netip.ParseAddrPort(a.String())
	return ap.Addr().Unmap()
}
