package engine

import (
	"fmt"
	"net"
	"strconv"
)

// listenerKind is one way of exposing the cluster to clients: a set of
// ports, how a connection accepted on them reaches an upstream node, and
// the addresses its clients are told. The Server holds a list of them
// (port-per-broker, routes.go and bootstrapgate.go; the SNI listener,
// sni.go) and treats every one alike: it binds them, serves them, tells
// them of every node the cluster reports and of every upstream whose
// health changes, and closes them.
type listenerKind interface {
	// bind binds the ports known before any metadata, logging each as
	// "listening"; serve then starts their accept loops (serveListener),
	// each accepted connection's pair carrying this listener.
	bind() error
	serve()
	// nodeSeen is told, before any client hears of it, that the cluster
	// reports node nodeID at upstream (host:port): a listener with a port
	// per node opens it here. An error keeps the node unknown.
	nodeSeen(nodeID int32, upstream string) error
	// advertised is where this listener's clients are told node nodeID
	// is, once the node was seen; the address rewriter hands it out.
	advertised(nodeID int32) (advertisedNode, bool)
	// upstreamChanged is told that upstream addr went down or came back.
	upstreamChanged(addr string)
	// route runs the listener's part of a new pair's start, before its
	// authentication stage: its TLS handshake, if any, and, for a
	// listener that learns the node from the handshake, p.nodeID.
	route(p *pair) error
	// responses is the listener's own response handler table: the same
	// filters, with an address rewriter that hands out this listener's
	// addresses (registerFilters fills it).
	responses() *responseFilters
	// ready reports whether the listener is bound and not closed.
	ready() bool
	// close closes every port for good.
	close()
}

// advertisedNode is the address a listener's clients are told for a
// node, and whether the listener accepts the node's connections now.
type advertisedNode struct {
	host      string
	port      int32
	listening bool
}

func (a advertisedNode) String() string {
	return net.JoinHostPort(a.host, strconv.Itoa(int(a.port)))
}

// listenerMapper is the address rewriter's rewrite.BrokerMapper for one
// listener's responses: the node becomes known to every listener (and
// routable) before the response reaches the client, who is told the
// listener's own address for it.
type listenerMapper struct {
	s *Server
	l listenerKind
}

func (m listenerMapper) MapBroker(nodeID int32, host string, port int32) (string, int32, error) {
	if err := m.s.nodeSeen(nodeID, host, port); err != nil {
		return "", 0, err
	}
	a, ok := m.l.advertised(nodeID)
	if !ok {
		return "", 0, fmt.Errorf("node %d: this listener has no address for it", nodeID)
	}
	return a.host, a.port, nil
}

// nodeSeen records that the cluster reports node nodeID at host:port,
// first telling every listener: a node one listener cannot serve stays
// unknown to all.
func (s *Server) nodeSeen(nodeID int32, host string, port int32) error {
	upstream := net.JoinHostPort(host, strconv.Itoa(int(port)))
	return s.nodes.record(nodeID, upstream, func() error {
		for _, l := range s.listeners {
			if err := l.nodeSeen(nodeID, upstream); err != nil {
				return err
			}
		}
		return nil
	})
}

// listenersReady reports whether every listener is bound and open.
func (s *Server) listenersReady() bool {
	for _, l := range s.listeners {
		if !l.ready() {
			return false
		}
	}
	return true
}

// listenerOf is s's listener of kind L, for the accessors of one kind
// (BootstrapAddr, SNIAddr).
func listenerOf[L listenerKind](s *Server) (L, bool) {
	for _, l := range s.listeners {
		if k, ok := l.(L); ok {
			return k, true
		}
	}
	var none L
	return none, false
}

// advertisedAddr is the address clients of s's listener of kind L are
// told for upstream node nodeID; false when there is no such listener or
// it has not seen the node.
func advertisedAddr[L listenerKind](s *Server, nodeID int32) (string, bool) {
	l, ok := listenerOf[L](s)
	if !ok {
		return "", false
	}
	a, ok := l.advertised(nodeID)
	if !ok {
		return "", false
	}
	return a.String(), true
}

// responseTable is the response handler table of p's listener: each
// listener's address rewriter hands out that listener's addresses.
func (p *pair) responseTable() *responseFilters { return p.via.responses() }
