package conformance

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testpki"
)

// The sni scenario is the tls-scram cell of every client, run against
// kproxy's SNI listener alone (listeners.sni, port_per_broker false): the
// client bootstraps from sniBootstrap and is told brokers as names of
// sniPattern, all at the one TLS port. Every client (the Java tools and
// librdkafka included) resolves the names through /etc/hosts lines
// testkit.AddHosts adds, so the scenario needs root, as CI has.
const (
	sniDomain    = "kafka.test"
	sniBootstrap = "bootstrap." + sniDomain
	sniPattern   = "broker-$(node_id)." + sniDomain
)

// startSNI starts e.sni, or sets e.sniSkip to why it cannot.
func (e *env) startSNI(t *testing.T) {
	t.Helper()
	names := []string{sniBootstrap}
	for _, id := range e.nodes {
		names = append(names, sniBrokerName(id))
	}
	if why := testkit.AddHosts(t, names...); why != "" {
		e.sniSkip = "the SNI names must resolve to kproxy for every client: " + why
		return
	}
	cert, key, err := e.pki.CA.WriteLeaf(e.pki.Dir, "sni-wildcard", testpki.Leaf{
		CommonName: "*." + sniDomain, DNSNames: []string{"*." + sniDomain}, Server: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	sni := fmt.Sprintf(`  port_per_broker: false
  sni:
    port: 0
    bootstrap_host: %s
    broker_host_pattern: %q
    tls: {cert_file: %q, key_file: %q}
`, sniBootstrap, sniPattern, cert, key)
	yaml := secureYAML(t, e.pki, e.upstream)
	at := strings.Index(yaml, "\nlog:")
	e.sni = kproxytest.Start(t, yaml[:at+1]+sni+yaml[at+1:])
}

func sniBrokerName(id int32) string {
	return strings.Replace(sniPattern, "$(node_id)", strconv.Itoa(int(id)), 1)
}

// tlsProxy is the kproxy a TLS cell runs against: e.sni for the sni
// scenario, e.upSCRAM or e.upOAuth for the upstream-* ones, else e.secure.
func (e *env) tlsProxy(c *cellCtx) *kproxytest.Kproxy {
	if c.key.scenario == "sni" {
		return e.sni
	}
	if px := e.upstreamSecurityProxy(c.key.scenario); px != nil {
		return px
	}
	return e.secure
}

// terminatesSASL reports whether clients of px log in with TLS and
// SCRAM-SHA-512 as user alice: the secure kproxies, whatever they do
// upstream.
func (e *env) terminatesSASL(px *kproxytest.Kproxy) bool {
	return px != nil && (px == e.secure || px == e.sni || px == e.upSCRAM || px == e.upOAuth)
}

// seed is where clients of px bootstrap: the bootstrap name at the SNI
// port for e.sni, else px's bootstrap address.
func (e *env) seed(px *kproxytest.Kproxy) string {
	if px == e.sni {
		_, port, _ := net.SplitHostPort(px.SNIAddr())
		return net.JoinHostPort(sniBootstrap, port)
	}
	return px.BootstrapAddr()
}

// nodeAddr is the address clients of px are told for node id.
func (e *env) nodeAddr(px *kproxytest.Kproxy, id int32) (string, bool) {
	if px == e.sni {
		return px.SNIBrokerAddr(id)
	}
	return px.BrokerAddr(id)
}
