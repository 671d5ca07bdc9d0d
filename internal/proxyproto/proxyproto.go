// Package proxyproto reads the PROXY protocol header (v1 text or v2
// binary, as HAProxy, AWS NLB and Envoy send it) that a load balancer
// puts in front of a client connection, so that kproxy sees the client's
// own address instead of the balancer's.
//
// Parsing is github.com/pires/go-proxyproto's; this package adds what
// kproxy needs around it: who may send a header, what happens without
// one, a deadline and size bound on reading it, and a connection that
// hands on every byte read past the header (the start of the Kafka or TLS
// stream) without losing the socket's splice path.
package proxyproto

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	proxyproto "github.com/pires/go-proxyproto"
)

// Mode says what a listener expects before the client's first byte.
type Mode int

const (
	// Optional reads a header from a trusted peer if it sends one and
	// serves the connection as is if it does not.
	Optional Mode = iota + 1
	// Required closes every connection without a valid header from a
	// trusted peer.
	Required
)

// readBufSize is what one read of the connection may take in while the
// header is parsed. Bytes past the header stay in it and are handed on by
// Conn; v2 headers longer than this are read through it, up to
// proxyproto.MaxV2HeaderSize (4 KiB of addresses and TLVs).
const readBufSize = 512

// Reasons an Accept fails, each wrapped in the error it returns; the
// server logs and counts them.
var (
	// ErrUntrusted: a peer outside the trusted networks sent a header (or,
	// in Required mode, connected at all).
	ErrUntrusted = errors.New("peer is not in listeners.proxy_protocol.trusted_cidrs")
	// ErrMissing: Required mode and the connection does not start with a
	// PROXY signature.
	ErrMissing = errors.New("no PROXY protocol header, and listeners.proxy_protocol.mode is required")
	// ErrMalformed: the connection starts with a PROXY signature but what
	// follows is not a valid header, or describes no TCP connection.
	ErrMalformed = errors.New("malformed PROXY protocol header")
	// ErrTimeout: the header did not arrive whole within the deadline.
	ErrTimeout = errors.New("PROXY protocol header not received in time")
)

// Acceptor reads the header of accepted connections. Its fields are fixed
// at construction; one Acceptor serves every listener concurrently.
type Acceptor struct {
	mode    Mode
	trusted []netip.Prefix
	timeout time.Duration
}

// NewAcceptor returns an Acceptor for mode that believes headers from
// peers in trusted only and gives each header timeout to arrive.
func NewAcceptor(mode Mode, trusted []netip.Prefix, timeout time.Duration) *Acceptor {
	return &Acceptor{mode: mode, trusted: trusted, timeout: timeout}
}

// Accept reads conn's header, if any, and returns the connection to serve:
// conn itself when nothing was read from it, or a *Conn whose RemoteAddr
// is the client's address from the header. On error conn is not closed
// (the caller logs why and closes it) and nothing it sent may be served.
func (a *Acceptor) Accept(conn net.Conn) (net.Conn, error) {
	peer := addrPortOf(conn.RemoteAddr())
	trusted := a.trusts(peer.Addr())
	if !trusted && a.mode == Required {
		return nil, ErrUntrusted
	}
	if err := conn.SetReadDeadline(time.Now().Add(a.timeout)); err != nil {
		return nil, fmt.Errorf("PROXY protocol header: %w", err)
	}
	br := bufio.NewReaderSize(conn, readBufSize)
	header, err := proxyproto.Read(br)
	if err := conn.SetReadDeadline(time.Time{}); err != nil {
		return nil, fmt.Errorf("PROXY protocol header: %w", err)
	}
	switch {
	case errors.Is(err, proxyproto.ErrNoProxyProtocol) && a.mode == Required:
		return nil, ErrMissing
	case errors.Is(err, proxyproto.ErrNoProxyProtocol):
		return wrap(conn, br, conn.RemoteAddr()), nil
	case isTimeout(err):
		return nil, ErrTimeout
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	case !trusted:
		return nil, ErrUntrusted
	}
	client, err := clientAddr(header, conn.RemoteAddr())
	if err != nil {
		return nil, err
	}
	return wrap(conn, br, client), nil
}

// clientAddr is the address a header stands for: its source for a proxied
// TCP connection, the socket's own peer for a LOCAL one (a balancer's
// health check) or an UNKNOWN one (v1), as the specification says.
func clientAddr(h *proxyproto.Header, socketPeer net.Addr) (net.Addr, error) {
	if h.Command.IsLocal() || h.TransportProtocol == proxyproto.UNSPEC {
		return socketPeer, nil
	}
	src, _, ok := h.TCPAddrs()
	if !ok {
		return nil, fmt.Errorf("%w: it describes a %s connection, not TCP", ErrMalformed, transportName(h.TransportProtocol))
	}
	ap := addrPortOf(src)
	return net.TCPAddrFromAddrPort(netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())), nil
}

func transportName(p proxyproto.AddressFamilyAndProtocol) string {
	switch {
	case p.IsUnix():
		return "unix socket"
	case p.IsDatagram():
		return "UDP"
	}
	return "non-TCP"
}

func (a *Acceptor) trusts(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, p := range a.trusted {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

func addrPortOf(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.AddrPort()
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
