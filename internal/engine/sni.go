package engine

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/labels"
)

// sniListenerName labels the SNI listener's connections in logs and
// metrics; the node a connection reaches is its node_id log field.
const sniListenerName = "sni"

// Why an SNI handshake was refused (the reason label of
// kproxy_sni_handshake_refused_total).
const (
	sniNoServerName = "no_server_name"
	sniUnknownName  = "unknown_name"
	sniUnknownNode  = "unknown_node"
)

// sniListener is the listener kind of listeners.sni: one TLS port whose
// connections are routed by the server name of their TLS ClientHello.
// Its clients are told every broker as a name of the pattern at this
// port, so they only ever learn this listener's addresses.
type sniListener struct {
	s   *Server
	cfg *config.SNIListener
	ln  net.Listener
	// tls is the listener's TLS configuration, certificates chosen per
	// server name and reloaded from disk (sni_tls.go).
	tls           *tls.Config
	principalFrom string
	// advertisedPort is the port clients are told: listeners.sni.advertised_port,
	// else the bound port.
	advertisedPort int32
	refused        *prometheus.CounterVec
	table          responseFilters
	// bound and closed make ready, which any goroutine may ask.
	bound, closed atomic.Bool
}

func newSNIListener(s *Server) *sniListener {
	c := s.cfg.Listeners.SNI
	return &sniListener{s: s, cfg: c, principalFrom: c.TLS.PrincipalFrom, refused: s.sniRefused}
}

// bind loads the listener's certificates and binds its port.
func (l *sniListener) bind() error {
	c := l.cfg
	tc, err := l.s.sniTLS(c)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(c.BindHost, strconv.Itoa(c.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listeners.sni.port: SNI listener on %s: %w", addr, err)
	}
	l.ln, l.tls, l.advertisedPort = ln, tc, int32(c.AdvertisedPort)
	if l.advertisedPort == 0 {
		l.advertisedPort = int32(ln.Addr().(*net.TCPAddr).Port)
	}
	l.bound.Store(true)
	l.s.log.Info().Str("listener", sniListenerName).Str("addr", ln.Addr().String()).
		Str("bootstrap_host", c.BootstrapHost).Str("broker_host_pattern", c.BrokerHostPattern).Msg("listening")
	return nil
}

// serve accepts on the one port; each pair's handshake sets its node.
func (l *sniListener) serve() { l.s.serveListener(l.ln, bootstrapNode, sniListenerName, l) }

// nodeSeen needs nothing: every node shares the one port.
func (l *sniListener) nodeSeen(int32, string) error { return nil }

// upstreamChanged changes nothing: the port serves every node, and a
// dead node's connections fail at their dial.
func (l *sniListener) upstreamChanged(string) {}

func (l *sniListener) route(p *pair) error { return p.handshakeSNI(l) }

func (l *sniListener) responses() *responseFilters { return &l.table }

func (l *sniListener) ready() bool { return l.bound.Load() && !l.closed.Load() }

func (l *sniListener) close() {
	if l.closed.CompareAndSwap(false, true) && l.ln != nil {
		l.ln.Close()
	}
}

// advertised is the name of broker_host_pattern at the SNI port, for a
// node the cluster reported.
func (l *sniListener) advertised(nodeID int32) (advertisedNode, bool) {
	if _, known := l.s.nodes.upstreamFor(nodeID); !known {
		return advertisedNode{}, false
	}
	return advertisedNode{host: l.cfg.BrokerHost(nodeID), port: l.advertisedPort, listening: l.ready()}, true
}

// nodeFor says which node a server name reaches: bootstrapNode for the
// bootstrap name, else a node the cluster reported. The error's reason is
// one of the sni* constants.
func (l *sniListener) nodeFor(serverName string) (int32, string, error) {
	switch {
	case serverName == "":
		return 0, sniNoServerName, errors.New("the client sent no TLS server name (SNI): it must connect by name, such as " + l.cfg.BootstrapHost)
	case l.cfg.IsBootstrapHost(serverName):
		return bootstrapNode, "", nil
	}
	nodeID, ok := l.cfg.NodeFor(serverName)
	if !ok {
		return 0, sniUnknownName, fmt.Errorf("server name %q is neither %s nor a name of %s", serverName, l.cfg.BootstrapHost, l.cfg.BrokerHostPattern)
	}
	if _, known := l.s.nodes.upstreamFor(nodeID); !known {
		return 0, sniUnknownNode, fmt.Errorf("server name %q names node %d, which the cluster has not reported", serverName, nodeID)
	}
	return nodeID, "", nil
}

// handshakeSNI runs the TLS handshake of a pair accepted on the SNI
// listener. The server name is routed before any certificate is sent: a
// name that reaches no node fails the handshake, logged and counted.
func (p *pair) handshakeSNI(l *sniListener) error {
	var refusal error
	perConn := &tls.Config{GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		nodeID, reason, err := l.nodeFor(hello.ServerName)
		if err != nil {
			l.refused.WithLabelValues(reason).Inc()
			p.logger().Warn().Str("server_name", hello.ServerName).Str("sni_refusal", reason).Err(err).
				Msg("TLS server name routes to no broker; handshake refused")
			refusal = err
			return nil, err
		}
		p.nodeID = nodeID // the pair's goroutine, before its loops start
		log := p.logger().With().Str("server_name", hello.ServerName).Int32("node_id", nodeID).Logger()
		p.setLogger(log)
		if l.tls.GetConfigForClient != nil {
			return l.tls.GetConfigForClient(hello)
		}
		return l.tls, nil
	}}
	err := p.handshakeTLS(perConn, l.principalFrom)
	if refusal != nil {
		return fail(reasonSNI, refusal)
	}
	return err
}

// newSNIRefused registers kproxy_sni_handshake_refused_total.
func newSNIRefused(reg prometheus.Registerer) *prometheus.CounterVec {
	c := newCounterVec("kproxy_sni_handshake_refused_total",
		"TLS handshakes on listeners.sni refused because the server name routes to no broker, by reason (no_server_name, unknown_name, unknown_node).", labels.Reason)
	for _, r := range []string{sniNoServerName, sniUnknownName, sniUnknownNode} {
		c.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(c)
	}
	return c
}

// SNIAddr is the bound address of listeners.sni, "" if it is not set.
func (s *Server) SNIAddr() string {
	l, ok := listenerOf[*sniListener](s)
	if !ok || l.ln == nil {
		return ""
	}
	return l.ln.Addr().String()
}

// SNIBrokerAddr is the address clients of listeners.sni are told for
// nodeID (a name of broker_host_pattern at the SNI port).
func (s *Server) SNIBrokerAddr(nodeID int32) (string, bool) {
	return advertisedAddr[*sniListener](s, nodeID)
}
