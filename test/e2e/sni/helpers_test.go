// Package e2esni drives kproxy's SNI listener (listeners.sni) end to end:
// real clients over one TLS port to a kfake cluster, names resolved to
// loopback by the clients' dialers (or /etc/hosts for kcat).
package e2esni

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testpki"
)

// The names of the SNI listener in these tests. They resolve nowhere:
// clients' dialers send them to 127.0.0.1.
const (
	domain        = "kafka.test"
	bootstrapHost = "bootstrap." + domain
	brokerPattern = "broker-$(node_id)." + domain
)

// pki is a CA, a wildcard server certificate for *.kafka.test and a
// client certificate, written into the test's directory.
type pki = certs.Files

func newPKI(t testing.TB) pki {
	t.Helper()
	return certs.NewWithServer(t, testpki.Leaf{CommonName: "*." + domain, DNSNames: []string{"*." + domain}, Server: true})
}

// yamlOpts are the parts of a test configuration that vary.
type yamlOpts struct {
	listeners string // more listeners keys, indented two spaces
	sni       string // more listeners.sni keys, indented four spaces
	tls       string // listeners.sni.tls as a flow map; empty: the wildcard pair
	extra     string // more top-level sections
}

// sniYAML is a configuration with the SNI listener in front of cluster.
func sniYAML(cluster *kfake.Cluster, p pki, o yamlOpts) string {
	if o.tls == "" {
		o.tls = fmt.Sprintf("{cert_file: %s, key_file: %s}", p.ServerCert, p.ServerKey)
	}
	return fmt.Sprintf(`
upstream:
  bootstrap_servers: ["%s"]
  dial_timeout: 5s
listeners:
  bind_host: 127.0.0.1
  bootstrap_port: 0
  broker_port_base: 0
%s
  sni:
    port: 0
    bootstrap_host: %s
    broker_host_pattern: "%s"
    tls: %s
%s
log: {level: warn}
%s`, strings.Join(cluster.ListenAddrs(), `", "`), o.listeners, bootstrapHost, brokerPattern, o.tls, o.sni, o.extra)
}

// sniDialer dials every name of the SNI listener at 127.0.0.1:port and
// completes a TLS handshake naming it; sniffer, if set, records the
// plaintext frames.
func sniDialer(port int, cfg *tls.Config, sniffer *testkit.Sniffer) func(ctx context.Context, network, host string) (net.Conn, error) {
	return func(ctx context.Context, network, host string) (net.Conn, error) {
		name, _, err := net.SplitHostPort(host)
		if err != nil {
			return nil, err
		}
		var d net.Dialer
		raw, err := d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			return nil, err
		}
		c := cfg.Clone()
		c.ServerName = name
		tc := tls.Client(raw, c)
		if err := tc.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, fmt.Errorf("TLS handshake naming %s: %w", name, err)
		}
		if sniffer != nil {
			return sniffer.Wrap(tc, host), nil
		}
		return tc, nil
	}
}

func sniPort(t testing.TB, p *kproxytest.Kproxy) int {
	t.Helper()
	_, port, err := net.SplitHostPort(p.SNIAddr())
	if err != nil {
		t.Fatalf("SNI address %q: %v", p.SNIAddr(), err)
	}
	n, _ := strconv.Atoi(port)
	return n
}

// sniClient is a franz-go client of kproxy's SNI listener.
func sniClient(t testing.TB, p *kproxytest.Kproxy, tc *tls.Config, sniffer *testkit.Sniffer, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return sniClientAt(t, sniPort(t, p), tc, sniffer, opts...)
}

// sniClientAt is a franz-go client of the SNI names at 127.0.0.1:port
// (kproxy's SNI port, or a balancer's in front of it).
func sniClientAt(t testing.TB, port int, tc *tls.Config, sniffer *testkit.Sniffer, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl := testkit.Client(t, append([]kgo.Opt{
		kgo.SeedBrokers(net.JoinHostPort(bootstrapHost, strconv.Itoa(port))),
		kgo.Dialer(sniDialer(port, tc, sniffer)),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
	}, opts...)...)
	return cl
}

// checkSNIAddrs fails t unless the sniffer saw Metadata and every address
// it saw, and every address the client dialed, is a name of the pattern
// (or the bootstrap name) at port.
func checkSNIAddrs(t testing.TB, s *testkit.Sniffer, port int) {
	t.Helper()
	for _, err := range s.Errors() {
		t.Errorf("sniffer: %v", err)
	}
	if len(s.Addrs()) == 0 {
		t.Fatalf("sniffer saw no broker address: the scan would be vacuous")
	}
	for _, a := range s.Addrs() {
		want := net.JoinHostPort(strings.Replace(brokerPattern, "$(node_id)", strconv.Itoa(int(a.NodeID)), 1), strconv.Itoa(port))
		if a.Addr != want {
			t.Errorf("client was told %s, want %s", a, want)
		}
	}
	for host := range s.Dialed() {
		name, p, _ := net.SplitHostPort(host)
		if p != strconv.Itoa(port) || (name != bootstrapHost && !strings.HasSuffix(name, "."+domain)) {
			t.Errorf("client dialed %s, not a name of the SNI listener at port %d", host, port)
		}
	}
	t.Logf("sniffer: %s", s.Summary())
}

func waitFor(d time.Duration, cond func() bool) bool { return testkit.WaitFor(d, cond) }

func clientTLS(p pki) *tls.Config {
	return &tls.Config{RootCAs: p.Pool(), MinVersion: tls.VersionTLS12}
}

func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }
