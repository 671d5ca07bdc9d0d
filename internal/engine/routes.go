package engine

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/kproxy/kproxy/internal/config"
)

// portPerBroker is the listener kind of listeners.port_per_broker: a
// bootstrap port (bootstrapgate.go) and one port per upstream node, so
// that a connection's port says its node. A node's port is opened when
// the node is first seen, closed while its upstream is down (refused, as
// the dead broker's own port would be) and reopened on the same port.
type portPerBroker struct {
	s     *Server
	cfg   config.Listeners
	gate  bootstrapGate
	table responseFilters

	mu     sync.Mutex
	nodes  map[int32]*nodeRoute
	closed bool
}

// nodeRoute is one upstream node's port: where the node really is, and
// where clients are told it is.
type nodeRoute struct {
	nodeID         int32
	upstreamAddr   string // host:port as the cluster advertises it
	advertisedHost string
	advertisedPort int32
	bindAddr       string       // where the listener is bound, to reopen it
	listener       net.Listener // nil while the upstream is down
}

func newPortPerBroker(s *Server) *portPerBroker {
	return &portPerBroker{s: s, cfg: s.cfg.Listeners, nodes: map[int32]*nodeRoute{}}
}

// bind binds the bootstrap port; node ports follow as nodes are seen.
func (l *portPerBroker) bind() error {
	return l.openBootstrap(net.JoinHostPort(l.cfg.BindHost, strconv.Itoa(l.cfg.BootstrapPort)))
}

func (l *portPerBroker) serve() { l.serveBootstrap() }

func (l *portPerBroker) responses() *responseFilters { return &l.table }

// route secures the connection with listeners.tls, if set: the port
// already chose the node.
func (l *portPerBroker) route(p *pair) error {
	if tc := l.s.sec.listenerTLS; tc != nil {
		return p.handshakeTLS(tc, l.s.sec.principalFrom)
	}
	return nil
}

func (l *portPerBroker) ready() bool {
	g := &l.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.bound != "" && !g.shut
}

// close closes the bootstrap port and every node's, and opens no more.
func (l *portPerBroker) close() {
	l.closeBootstrap()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for _, n := range l.nodes {
		if n.listener != nil {
			n.listener.Close()
		}
	}
}

// nodeSeen records upstream as node nodeID's upstream address, opening
// the node's port if this is the first time the node is seen.
func (l *portPerBroker) nodeSeen(nodeID int32, upstream string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return fmt.Errorf("node %d: %w", nodeID, errShuttingDown)
	}
	if n, ok := l.nodes[nodeID]; ok {
		n.upstreamAddr = upstream
		// A failed reopen is retried here; it was logged when it failed.
		_ = l.follow(n)
		return nil
	}
	n, err := l.listen(nodeID)
	if err != nil {
		return err
	}
	n.upstreamAddr = upstream
	l.nodes[nodeID] = n
	_ = l.follow(n) // closing cannot fail
	return nil
}

// upstreamChanged makes the bootstrap port follow the bootstrap servers'
// health, and the port of every node served at upstream addr follow
// that address's: closed while it is down, so that the node's kproxy
// port refuses connections as the dead broker's own port would, and
// reopened on the same port once it is back.
func (l *portPerBroker) upstreamChanged(addr string) {
	l.bootstrapFollow(addr)
	l.mu.Lock()
	var errs []error
	for _, n := range l.nodes {
		if n.upstreamAddr == addr {
			errs = append(errs, l.follow(n))
		}
	}
	l.mu.Unlock()
	if err := errors.Join(errs...); err != nil {
		l.s.log.Error().Err(err).Str("upstream", addr).Msg("broker listener not reopened; retried when metadata next names the node")
	}
}

// follow closes or reopens n's listener as its upstream's health says.
// l.mu held.
func (l *portPerBroker) follow(n *nodeRoute) error {
	if l.closed {
		return nil
	}
	down := l.s.health.down(n.upstreamAddr)
	switch {
	case down && n.listener != nil:
		n.listener.Close()
		n.listener = nil
		l.s.nodeListenerPaused(n.nodeID, n.upstreamAddr)
	case !down && n.listener == nil:
		ln, err := l.s.openNodeListener(n.nodeID, n.bindAddr, l)
		if err != nil {
			return fmt.Errorf("reopen listener for node %d on %s: %w", n.nodeID, n.bindAddr, err)
		}
		n.listener = ln
	}
	return nil
}

// listen binds node nodeID's listener at the configured port: an override,
// else broker_port_base + node id, else (base 0) any free port.
func (l *portPerBroker) listen(nodeID int32) (*nodeRoute, error) {
	port := l.cfg.BrokerPort(nodeID)
	host := l.cfg.AdvertisedHost
	for _, o := range l.cfg.Brokers {
		if o.NodeID == nodeID && o.AdvertisedHost != "" {
			host = o.AdvertisedHost
		}
	}
	if port > 65535 {
		return nil, fmt.Errorf("%w: node %d: listeners.broker_port_base %d + node id is %d, beyond the last TCP port; add a listeners.brokers override for it",
			errNodeListener, nodeID, l.cfg.BrokerPortBase, port)
	}
	addr := net.JoinHostPort(l.cfg.BindHost, strconv.Itoa(port))
	ln, err := l.s.openNodeListener(nodeID, addr, l)
	if err != nil {
		return nil, fmt.Errorf("%s: %w for node %d on %s: %w", l.portKey(nodeID), errNodeListener, nodeID, addr, err)
	}
	boundPort := ln.Addr().(*net.TCPAddr).Port
	return &nodeRoute{nodeID: nodeID, advertisedHost: host, advertisedPort: int32(boundPort), listener: ln,
		bindAddr: net.JoinHostPort(l.cfg.BindHost, strconv.Itoa(boundPort))}, nil
}

// portKey names the configuration key that gives nodeID's port: its
// override in listeners.brokers, else listeners.broker_port_base.
func (l *portPerBroker) portKey(nodeID int32) string {
	for i, o := range l.cfg.Brokers {
		if o.NodeID == nodeID && o.Port != 0 {
			return fmt.Sprintf("listeners.brokers[%d].port", i)
		}
	}
	return "listeners.broker_port_base"
}

// advertised returns the address clients are told for nodeID.
func (l *portPerBroker) advertised(nodeID int32) (advertisedNode, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, ok := l.nodes[nodeID]
	if !ok {
		return advertisedNode{}, false
	}
	return advertisedNode{host: n.advertisedHost, port: n.advertisedPort, listening: n.listener != nil}, true
}

// BrokerAddr is the address clients are told for upstream node nodeID.
func (s *Server) BrokerAddr(nodeID int32) (string, bool) {
	return advertisedAddr[*portPerBroker](s, nodeID)
}

// openNodeListener binds nodeID's port at addr and serves it for l.
func (s *Server) openNodeListener(nodeID int32, addr string, l listenerKind) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s.log.Info().Int32("node_id", nodeID).Str("addr", ln.Addr().String()).Msg("listening for broker")
	s.metrics.brokerListens.Inc()
	s.serveListener(ln, nodeID, listenerName(nodeID), l)
	return ln, nil
}

// nodeListenerPaused logs that a node's listener was closed because its
// upstream is down.
func (s *Server) nodeListenerPaused(nodeID int32, upstream string) {
	s.metrics.brokerListens.Dec()
	s.log.Info().Int32("node_id", nodeID).Str("upstream", upstream).
		Msg("broker listener closed while its upstream is unreachable: clients are refused as by a dead broker")
}

func listenerName(nodeID int32) string {
	if nodeID == bootstrapNode {
		return "bootstrap"
	}
	return "node-" + strconv.Itoa(int(nodeID))
}
