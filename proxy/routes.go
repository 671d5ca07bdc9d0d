package proxy

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/kproxy/kproxy/internal/config"
)

// bootstrapNode marks the bootstrap listener, which serves no single node.
const bootstrapNode = int32(-1)

// nodeRoute is what kproxy knows about one upstream node: where it really
// is, and where clients are told it is.
type nodeRoute struct {
	nodeID         int32
	upstreamAddr   string // host:port as the cluster advertises it
	advertisedHost string
	advertisedPort int32
	bindAddr       string       // where the listener is bound, to reopen it
	listener       net.Listener // nil while the upstream is down
}

// routes maps upstream node ids to their listeners. It implements
// rewrite.BrokerMapper: every address a response carries passes through
// MapBroker, which opens the node's listener before the response moves on.
type routes struct {
	cfg  config.Listeners
	open func(nodeID int32, addr string) (net.Listener, error)
	// upstreamDown says whether an upstream address is known unreachable
	// (nil: never); paused is told a node's listener was closed for it.
	upstreamDown func(addr string) bool
	paused       func(nodeID int32, upstream string)
	mu           sync.Mutex
	nodes        map[int32]*nodeRoute
	closed       bool
}

func newRoutes(cfg config.Listeners, open func(int32, string) (net.Listener, error)) *routes {
	return &routes{cfg: cfg, open: open, nodes: map[int32]*nodeRoute{}}
}

// nodeIDs lists the nodes seen so far.
func (r *routes) nodeIDs() []int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]int32, 0, len(r.nodes))
	for id := range r.nodes {
		ids = append(ids, id)
	}
	return ids
}

// MapBroker records host:port as node nodeID's upstream address and returns
// the address clients must use instead, opening the node's listener first
// if this is the first time the node is seen.
func (r *routes) MapBroker(nodeID int32, host string, port int32) (string, int32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return "", 0, fmt.Errorf("node %d: kproxy is shutting down", nodeID)
	}
	upstream := net.JoinHostPort(host, strconv.Itoa(int(port)))
	if n, ok := r.nodes[nodeID]; ok {
		n.upstreamAddr = upstream
		// A failed reopen is retried here; it was logged when it failed.
		_ = r.follow(n)
		return n.advertisedHost, n.advertisedPort, nil
	}
	n, err := r.listen(nodeID)
	if err != nil {
		return "", 0, err
	}
	n.upstreamAddr = upstream
	r.nodes[nodeID] = n
	_ = r.follow(n) // closing cannot fail
	return n.advertisedHost, n.advertisedPort, nil
}

// upstreamChanged makes the listener of every node served at upstream addr
// follow that address's health: closed while it is down, so that the
// node's kproxy port refuses connections as the dead broker's own port
// would, and reopened on the same port once it is back.
func (r *routes) upstreamChanged(addr string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, n := range r.nodes {
		if n.upstreamAddr == addr {
			errs = append(errs, r.follow(n))
		}
	}
	return errors.Join(errs...)
}

// follow closes or reopens n's listener as its upstream's health says.
// r.mu held.
func (r *routes) follow(n *nodeRoute) error {
	if r.closed || r.upstreamDown == nil || !r.cfg.PortPerBrokerEnabled() {
		return nil
	}
	down := r.upstreamDown(n.upstreamAddr)
	switch {
	case down && n.listener != nil:
		n.listener.Close()
		n.listener = nil
		if r.paused != nil {
			r.paused(n.nodeID, n.upstreamAddr)
		}
	case !down && n.listener == nil:
		ln, err := r.open(n.nodeID, n.bindAddr)
		if err != nil {
			return fmt.Errorf("reopen listener for node %d on %s: %w", n.nodeID, n.bindAddr, err)
		}
		n.listener = ln
	}
	return nil
}

// listen binds node nodeID's listener at the configured port: an override,
// else broker_port_base + node id, else (base 0) any free port.
//
// With listeners.port_per_broker false nothing is bound: the route only
// records the node's upstream address, for the SNI listener.
func (r *routes) listen(nodeID int32) (*nodeRoute, error) {
	if !r.cfg.PortPerBrokerEnabled() {
		return &nodeRoute{nodeID: nodeID}, nil
	}
	port := r.cfg.BrokerPort(nodeID)
	host := r.cfg.AdvertisedHost
	for _, o := range r.cfg.Brokers {
		if o.NodeID == nodeID && o.AdvertisedHost != "" {
			host = o.AdvertisedHost
		}
	}
	if port > 65535 {
		return nil, fmt.Errorf("%w: node %d: listeners.broker_port_base %d + node id is %d, beyond the last TCP port; add a listeners.brokers override for it",
			errNodeListener, nodeID, r.cfg.BrokerPortBase, port)
	}
	addr := net.JoinHostPort(r.cfg.BindHost, strconv.Itoa(port))
	ln, err := r.open(nodeID, addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w for node %d on %s: %w", r.portKey(nodeID), errNodeListener, nodeID, addr, err)
	}
	boundPort := ln.Addr().(*net.TCPAddr).Port
	return &nodeRoute{nodeID: nodeID, advertisedHost: host, advertisedPort: int32(boundPort), listener: ln,
		bindAddr: net.JoinHostPort(r.cfg.BindHost, strconv.Itoa(boundPort))}, nil
}

// portKey names the configuration key that gives nodeID's port: its
// override in listeners.brokers, else listeners.broker_port_base.
func (r *routes) portKey(nodeID int32) string {
	for i, o := range r.cfg.Brokers {
		if o.NodeID == nodeID && o.Port != 0 {
			return fmt.Sprintf("listeners.brokers[%d].port", i)
		}
	}
	return "listeners.broker_port_base"
}

// upstreamFor returns the upstream address of nodeID, if known.
func (r *routes) upstreamFor(nodeID int32) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.nodes[nodeID]
	if !ok || n.upstreamAddr == "" {
		return "", false
	}
	return n.upstreamAddr, true
}

// advertised returns the address clients are told for nodeID.
func (r *routes) advertised(nodeID int32) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.nodes[nodeID]
	if !ok || !r.cfg.PortPerBrokerEnabled() {
		return "", false
	}
	return net.JoinHostPort(n.advertisedHost, strconv.Itoa(int(n.advertisedPort))), true
}

// closeAll closes every node listener and refuses new ones.
func (r *routes) closeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for _, n := range r.nodes {
		if n.listener != nil {
			n.listener.Close()
		}
	}
}

func (r *routes) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.nodes)
}
