package network

import (
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testpki"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// The SNI listener's names in these tests; clients dial 127.0.0.1 and
// name them in the TLS handshake.
const (
	sniDomain    = "kafka.test"
	sniBootstrap = "bootstrap." + sniDomain
	sniPattern   = "broker-$(node_id)." + sniDomain
)

// sniLookalikeConfig is kproxy with an SNI listener (and the bootstrap
// port the harness waits for) in front of a two-node kfake cluster.
func sniLookalikeConfig(t *testing.T) (cfg, sniAddr string, pki certs.Files) {
	pki = certs.NewWithServer(t, testpki.Leaf{CommonName: "*." + sniDomain, DNSNames: []string{"*." + sniDomain}, Server: true})
	port := testkit.FreePort(t)
	cfg = testkit.Config{Upstream: advkit.Kfake(t, 2), ListenerKeys: sniListener(port, pki), Admin: true, Log: "{level: info}"}.YAML()
	return cfg, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), pki
}

// sniListener is the listeners' sni key: the one-port SNI listener on
// port for sniBootstrap and sniPattern, serving pki's server certificate.
func sniListener(port int, pki certs.Files) string {
	return fmt.Sprintf("sni: {port: %d, bootstrap_host: %s, broker_host_pattern: %q, tls: {cert_file: %q, key_file: %q}}",
		port, sniBootstrap, sniPattern, pki.ServerCert, pki.ServerKey)
}

// An attacker names a broker with a Unicode lookalike: the Kelvin sign
// (U+212A) for "k", the long s (U+017F) for "s". Unicode case folding
// equates them with the ASCII letters; a TLS server name is an ASCII host
// name (RFC 6066, section 3), so each must fail the handshake exactly as
// an unknown name does (unrecognized name: counted as unknown_name, the
// same log line), while the ASCII name, in any case, still reaches node 1.
func TestSNIUnicodeLookalikeIsAnUnknownName(t *testing.T) {
	cfg, addr, pki := sniLookalikeConfig(t)
	kp := advkit.Start(t, cfg)
	const refused = `kproxy_sni_handshake_refused_total{reason="unknown_name"}`

	for _, name := range []string{"broker-1." + sniDomain, "BROKER-1.Kafka.TEST", sniBootstrap} {
		c, err := testkit.DialRawTLS(t, addr, "sni-ascii", &tls.Config{ServerName: name, RootCAs: pki.Pool(), MinVersion: tls.VersionTLS12})
		if err != nil {
			t.Fatalf("handshake naming %q (an ASCII name kproxy serves): %v", name, err)
		}
		resp := c.MustRoundTrip(t, kmsg.NewPtrMetadataRequest()).(*kmsg.MetadataResponse)
		if len(resp.Brokers) != 2 {
			t.Fatalf("Metadata through %q: %d brokers, want 2", name, len(resp.Brokers))
		}
		c.Close()
	}

	for i, name := range []string{
		"bro\u212Aer-1." + sniDomain, // Kelvin sign for k
		"BRO\u212AER-1.KAFKA.TEST",   // the same, upper case
		"bootstrap.\u212Aafka.test",  // the bootstrap name
		"broker-1.kafka.te\u017Ft",   // long s for s
		"bootstrap.kafka.te\u017Ft",  // long s, bootstrap
		"broker-1.kafka.test\u200b",  // zero-width space
		"broker-\uff11." + sniDomain, // fullwidth digit one
	} {
		// The attacker skips verification: it wants the route, whatever
		// certificate comes back.
		_, err := testkit.DialRawTLS(t, addr, "sni-lookalike", &tls.Config{ServerName: name, InsecureSkipVerify: true, MinVersion: tls.VersionTLS12})
		if err == nil {
			t.Fatalf("handshake naming %q succeeded: a non-ASCII server name was routed", name)
		}
		l := kp.WaitLog("the refusal of "+name, func(l testkit.LogLine) bool {
			return l.Message() == "TLS server name routes to no broker; handshake refused" && l["server_name"] == name
		})
		if l["sni_refusal"] != "unknown_name" {
			t.Errorf("%q refused as %v, want unknown_name (as any unknown name)", name, l["sni_refusal"])
		}
		if got := testkit.ScrapeMetric(t, kp.Admin, refused); got != float64(i+1) {
			t.Errorf("after %d lookalikes %s = %v, want %d", i+1, refused, got, i+1)
		}
	}
}
