package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kproxy/kproxy/internal/tlsconfig"
)

// NodeIDPlaceholder is what listeners.sni.broker_host_pattern holds where
// a broker's node id goes.
const NodeIDPlaceholder = "$(node_id)"

// SNIListener is listeners.sni: one TLS port for the whole cluster. Each
// connection is routed by the TLS server name it asks for, to
// BootstrapHost's upstream bootstrap servers or to the node whose name
// BrokerHostPattern builds; clients of this listener are told brokers as
// those names, at this port.
type SNIListener struct {
	BindHost string `yaml:"bind_host"`
	// Port is the one port (0 picks a free one: for tests).
	Port int `yaml:"port"`
	// AdvertisedPort is the port clients are told, when a load balancer
	// in front listens on another one; 0: Port (or the port bound).
	AdvertisedPort    int    `yaml:"advertised_port"`
	BootstrapHost     string `yaml:"bootstrap_host"`
	BrokerHostPattern string `yaml:"broker_host_pattern"`
	// TLS has the keys of listeners.tls; its key pair is served to names
	// no entry of Certificates covers.
	TLS *ListenerTLS `yaml:"tls"`
	// Certificates are further key pairs, each served to the server names
	// its certificate covers (the first that does wins).
	Certificates []KeyPair `yaml:"certificates"`
}

// KeyPair is one certificate (chain) and its key, PEM files.
type KeyPair struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// PortPerBrokerEnabled reports whether the bootstrap port and one port per
// broker are served (listeners.port_per_broker, default true).
func (l Listeners) PortPerBrokerEnabled() bool { return l.PortPerBroker == nil || *l.PortPerBroker }

// BrokerHost is the server name of node nodeID on this listener.
func (s *SNIListener) BrokerHost(nodeID int32) string {
	return strings.Replace(s.BrokerHostPattern, NodeIDPlaceholder, strconv.Itoa(int(nodeID)), 1)
}

// IsBootstrapHost reports whether serverName is BootstrapHost, compared
// as host names are (HostName: ASCII only, case-insensitive in ASCII).
func (s *SNIListener) IsBootstrapHost(serverName string) bool {
	return SameHostName(serverName, s.BootstrapHost)
}

// NodeFor parses a server name built by BrokerHost and returns its node
// id. Names compare as HostName says: ASCII only, case-insensitive in
// ASCII.
func (s *SNIListener) NodeFor(serverName string) (int32, bool) {
	name, ok := HostName(serverName)
	if !ok {
		return 0, false
	}
	// The pattern is a host name with one placeholder (validated at load).
	prefix, suffix, _ := strings.Cut(lowerASCII(s.BrokerHostPattern), NodeIDPlaceholder)
	if len(name) <= len(prefix)+len(suffix) || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) {
		return 0, false
	}
	digits := name[len(prefix) : len(name)-len(suffix)]
	if digits[0] == '+' || digits[0] == '-' || (len(digits) > 1 && digits[0] == '0') {
		return 0, false // one spelling per node: no sign, no leading zero
	}
	id, err := strconv.ParseInt(digits, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(id), true
}

func (s *SNIListener) applyDefaults(l *Listeners) {
	if s.BindHost == "" {
		s.BindHost = l.BindHost
	}
	if s.TLS != nil && s.TLS.ClientAuth == "" {
		s.TLS.ClientAuth = tlsconfig.ClientAuthNone
	}
}

func (s *SNIListener) validate(bad func(key, format string, args ...any)) {
	if s.Port < 0 || s.Port > 65535 {
		bad("listeners.sni.port", "%d: must be a TCP port (0-65535; 0 picks a free one)", s.Port)
	}
	if s.AdvertisedPort < 0 || s.AdvertisedPort > 65535 {
		bad("listeners.sni.advertised_port", "%d: must be a TCP port (1-65535), or 0 for listeners.sni.port", s.AdvertisedPort)
	}
	if !validHostName(s.BootstrapHost) {
		bad("listeners.sni.bootstrap_host", "%q: required, a DNS name clients bootstrap from (such as bootstrap.kafka.example.com)", s.BootstrapHost)
	}
	pattern := s.BrokerHostPattern
	switch {
	case strings.Count(pattern, NodeIDPlaceholder) != 1:
		bad("listeners.sni.broker_host_pattern", "%q: must hold %s exactly once (such as broker-%s.kafka.example.com)", pattern, NodeIDPlaceholder, NodeIDPlaceholder)
	case !validHostName(s.BrokerHost(0)):
		bad("listeners.sni.broker_host_pattern", "%q: with a node id in place of %s it must be a DNS name", pattern, NodeIDPlaceholder)
	case s.BootstrapHost != "":
		if _, ok := s.NodeFor(s.BootstrapHost); ok {
			bad("listeners.sni.bootstrap_host", "%q matches listeners.sni.broker_host_pattern %q: a server name must name one destination", s.BootstrapHost, pattern)
		}
	}
	if s.TLS == nil {
		bad("listeners.sni.tls", "required: the SNI listener speaks TLS (cert_file, key_file, and optionally client_auth, client_ca_file, principal_from as in listeners.tls)")
	} else {
		for _, err := range s.TLS.validate("listeners.sni.tls") {
			bad("listeners.sni.tls", "%s", strings.TrimPrefix(err.Error(), "listeners.sni.tls."))
		}
	}
	for i, kp := range s.Certificates {
		if kp.CertFile == "" || kp.KeyFile == "" {
			bad(fmt.Sprintf("listeners.sni.certificates[%d]", i), "cert_file and key_file are both required")
		}
	}
}
