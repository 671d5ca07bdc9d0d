package proxy

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/internal/config"
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

// sniListener is listeners.sni: one TLS port whose connections are routed
// by the server name of their TLS ClientHello. Its clients are told every
// broker as a name of the pattern at this port (mapper), so they only
// ever learn this listener's addresses.
type sniListener struct {
	cfg    *config.SNIListener
	ln     net.Listener
	routes *routes
	// tls is the listener's TLS configuration, certificates chosen per
	// server name and reloaded from disk (sni_tls.go).
	tls           *tls.Config
	principalFrom string
	// advertisedPort is the port clients are told: listeners.sni.advertised_port,
	// else the bound port.
	advertisedPort int32
	refused        *prometheus.CounterVec
}

// sniMapper is the address rewriter's Mapper for the SNI listener's
// responses: it records the node's upstream address, exactly as the
// port-per-broker routes do (so the node is routable before the response
// reaches the client), and hands out the node's name at the SNI port.
// Only SNI pairs use it, so s.sni is set (Start binds it before serving).
type sniMapper struct{ s *Server }

func (m sniMapper) MapBroker(nodeID int32, host string, port int32) (string, int32, error) {
	if _, _, err := m.s.routes.MapBroker(nodeID, host, port); err != nil {
		return "", 0, err
	}
	l := m.s.sni
	return l.cfg.BrokerHost(nodeID), l.advertisedPort, nil
}

// advertised is the host:port clients of the SNI listener are told for
// nodeID.
func (l *sniListener) advertised(nodeID int32) string {
	return net.JoinHostPort(l.cfg.BrokerHost(nodeID), strconv.Itoa(int(l.advertisedPort)))
}

// route says which node a server name reaches: bootstrapNode for the
// bootstrap name, else a node the routes know. The error's reason is one
// of the sni* constants.
func (l *sniListener) route(serverName string) (int32, string, error) {
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
	if _, known := l.routes.upstreamFor(nodeID); !known {
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
		nodeID, reason, err := l.route(hello.ServerName)
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

// newSNIListener binds listeners.sni.
func (s *Server) newSNIListener() (*sniListener, error) {
	c := s.cfg.Listeners.SNI
	tc, err := s.sniTLS(c)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(c.BindHost, strconv.Itoa(c.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listeners.sni.port: SNI listener on %s: %w", addr, err)
	}
	l := &sniListener{cfg: c, ln: ln, routes: s.routes, tls: tc, principalFrom: c.TLS.PrincipalFrom,
		advertisedPort: int32(c.AdvertisedPort), refused: s.sniRefused}
	if l.advertisedPort == 0 {
		l.advertisedPort = int32(ln.Addr().(*net.TCPAddr).Port)
	}
	return l, nil
}

// newSNIRefused registers kproxy_sni_handshake_refused_total.
func newSNIRefused(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kproxy_sni_handshake_refused_total",
		Help: "TLS handshakes on listeners.sni refused because the server name routes to no broker, by reason (no_server_name, unknown_name, unknown_node).",
	}, []string{"reason"})
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
	if s.sni == nil {
		return ""
	}
	return s.sni.ln.Addr().String()
}

// SNIBrokerAddr is the address clients of listeners.sni are told for
// nodeID (a name of broker_host_pattern at the SNI port).
func (s *Server) SNIBrokerAddr(nodeID int32) (string, bool) {
	if s.sni == nil {
		return "", false
	}
	if _, known := s.routes.upstreamFor(nodeID); !known {
		return "", false
	}
	return s.sni.advertised(nodeID), true
}

// pairResponses is the response handler table and needs of p's listener:
// each listener's address rewriter hands out that listener's addresses.
func (p *pair) responseTable() *responseFilters {
	if p.sni != nil {
		return &p.s.sniResponses
	}
	return &p.s.responses
}
