package engine

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/testkit/tcppeer"
	"github.com/kproxy/kproxy/internal/testpki"
)

// admissionServer starts a Server on a free bootstrap port with the
// listeners and limits keys given (YAML lines under listeners: and
// limits:), in front of an upstream nobody listens on: connections are
// accepted and held in their handshakes, never served.
func admissionServer(t *testing.T, listeners, limits string) (*Server, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	s := startServer(t, fmt.Sprintf(`
upstream: {bootstrap_servers: [%q]}
listeners:
  bind_host: 127.0.0.1
  bootstrap_port: 0
%s
limits:
%s
`, silentUpstream(t), listeners, limits), zerolog.Nop(), reg)
	return s, reg
}

// silentUpstream is the address of a listener that accepts connections
// and never answers: an upstream reachable enough that the bootstrap
// listener stays open (it closes while no bootstrap server is reachable),
// for tests of what happens before a request is relayed.
func silentUpstream(t *testing.T) string {
	t.Helper()
	return tcppeer.Serve(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
}

// admissionMetric is the value of the series of name whose labels
// include every name, value pair of labels (0 if none).
func admissionMetric(t *testing.T, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, l := range m.GetLabel() {
					found = found || l.GetName() == labels[i] && l.GetValue() == labels[i+1]
				}
				if !found {
					continue series
				}
			}
			switch {
			case m.GetGauge() != nil:
				total += m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// waitAdmission waits up to 20 seconds for cond, failing with what()
// describing the state it last saw.
func waitAdmission(t *testing.T, cond func() bool, what func() string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("within 20s: %s", what())
		}
	}
}

// halfProxyHeader is the first 6 of the 12 bytes of the PROXY protocol v2
// signature: a peer that writes it and stops holds kproxy waiting.
const halfProxyHeader = "\r\n\r\n\x00\r"

// Connections that send half a PROXY header count against the connection
// limits from accept: beyond each limit a new connection is closed at
// once, however many the peer opens; before, every one was held until
// limits.handshake_timeout.
func TestHalfProxyHeadersCountAgainstLimits(t *testing.T) {
	const pp = "  proxy_protocol: {mode: required, trusted_cidrs: [127.0.0.1/32]}"
	for _, tc := range []struct {
		name, limits, reason string
		held                 int
	}{
		{"max_connections", "  max_connections: 4", reasonLimit, 4},
		{"max_connections_per_ip", "  max_connections_per_ip: 3", reasonLimit, 3},
		{"max_handshakes", "  max_handshakes: 5", reasonHandshakeLimit, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, reg := admissionServer(t, pp, tc.limits+"\n  handshake_timeout: 5m")
			const opened = 12
			conns := make([]net.Conn, 0, opened)
			for range opened {
				c, err := net.Dial("tcp", s.BootstrapAddr())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				c.Write([]byte(halfProxyHeader)) // a refused connection may be closed already
				conns = append(conns, c)
			}
			active := func() float64 { return admissionMetric(t, reg, "kproxy_connections_active") }
			refused := func() float64 { return admissionMetric(t, reg, "kproxy_connections_closed_total", "reason", tc.reason) }
			waitAdmission(t, func() bool { return active() == float64(tc.held) && refused() == float64(opened-tc.held) },
				func() string {
					return fmt.Sprintf("%v connections held and %v refused for %s; want %d held (the limit) and %d refused",
						active(), refused(), tc.reason, tc.held, opened-tc.held)
				})
			if h := admissionMetric(t, reg, "kproxy_connections_handshaking"); h != float64(tc.held) {
				t.Errorf("kproxy_connections_handshaking = %v, want %d (every held connection awaits its header)", h, tc.held)
			}
			for _, c := range conns {
				c.Close()
			}
			waitAdmission(t, func() bool { return active() == 0 && admissionMetric(t, reg, "kproxy_connections_handshaking") == 0 },
				func() string {
					return fmt.Sprintf("after every client closed: %v active, %v handshaking; want 0",
						active(), admissionMetric(t, reg, "kproxy_connections_handshaking"))
				})
		})
	}
}

// proxyV2Header is a PROXY protocol v2 header naming client (IPv4) as the
// connection's source.
func proxyV2Header(client netip.AddrPort) []byte {
	h := []byte("\r\n\r\n\x00\r\nQUIT\n\x21\x11\x00\x0c")
	h = append(h, client.Addr().AsSlice()...)
	h = append(h, 127, 0, 0, 1)
	h = binary.BigEndian.AppendUint16(h, client.Port())
	return binary.BigEndian.AppendUint16(h, 9092)
}

// Connections abandoned or refused at every stage of their handshake
// (PROXY header, TLS) and after it give back every count they took: the
// gauges and the per-address counts return to zero.
func TestAdmissionReleasedOnEveryExit(t *testing.T) {
	dir := t.TempDir()
	caFile, cert, key, _, _, err := testpki.WriteTestPKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pemCA, _ := os.ReadFile(caFile)
	pool.AppendCertsFromPEM(pemCA)
	s, reg := admissionServer(t, fmt.Sprintf("  proxy_protocol: {mode: required, trusted_cidrs: [127.0.0.1/32]}\n  tls: {cert_file: %s, key_file: %s}", cert, key),
		"  max_connections_per_ip: 2\n  handshake_timeout: 6s")
	dial := func(first []byte) net.Conn {
		c, err := net.Dial("tcp", s.BootstrapAddr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.Write(first)
		return c
	}
	tlsAs := func(client netip.AddrPort) *tls.Conn {
		tc := tls.Client(dial(proxyV2Header(client)), &tls.Config{ServerName: "localhost", RootCAs: pool})
		if err := tc.Handshake(); err != nil {
			t.Fatalf("TLS after a PROXY header naming %s: %v", client, err)
		}
		return tc
	}
	active := func() float64 { return admissionMetric(t, reg, "kproxy_connections_active") }
	handshaking := func() float64 { return admissionMetric(t, reg, "kproxy_connections_handshaking") }
	// Each step waits for the count it leaves: the per-address limit
	// counts 127.0.0.1 (the balancer) until a header names the client.
	settle := func(step string, want float64) {
		t.Helper()
		waitAdmission(t, func() bool { return active() == want },
			func() string { return fmt.Sprintf("after %s: %v connections active, want %v", step, active(), want) })
	}
	// A connection a step opens may not be accepted yet when the count is
	// first read, which would then pass at once; and while it is counted
	// against 127.0.0.1 it can make the per-address limit refuse the next
	// step's connection. So these steps wait until kproxy has closed the
	// connection they open, as well as for the count.
	closed := func() float64 { return admissionMetric(t, reg, "kproxy_connections_closed_total") }
	settleClosed := func(step string, want float64, open func()) {
		t.Helper()
		before := closed()
		open()
		waitAdmission(t, func() bool { return closed() > before && active() == want },
			func() string {
				return fmt.Sprintf("after %s: %v connections closed by kproxy since (want 1 or more), %v active (want %v)", step, closed()-before, active(), want)
			})
	}
	a, b := tlsAs(netip.MustParseAddrPort("198.51.100.9:1")), tlsAs(netip.MustParseAddrPort("198.51.100.9:2"))
	settle("two connections served for 198.51.100.9", 2)
	third := dial(proxyV2Header(netip.MustParseAddrPort("198.51.100.9:3")))
	third.SetReadDeadline(time.Now().Add(20 * time.Second))
	if n, err := third.Read(make([]byte, 1)); err == nil {
		t.Errorf("a third connection from 198.51.100.9 read %d bytes; want it closed (max_connections_per_ip 2)", n)
	}
	settle("a third from 198.51.100.9, refused once its header named it", 2)
	settleClosed("a connection served and closed", 2, func() { tlsAs(netip.MustParseAddrPort("198.51.100.8:1")).Close() })
	settleClosed("half a header, abandoned", 2, func() { dial([]byte(halfProxyHeader)).Close() })
	settleClosed("a malformed header", 2, func() { dial([]byte("PROXY TCP4 198.51.100.7 nowhere 1 2\r\n")) })
	settleClosed("half a ClientHello, abandoned", 2, func() {
		dial(append(proxyV2Header(netip.MustParseAddrPort("198.51.100.7:1")), 0x16, 3)).Close()
	})
	open := []net.Conn{a, b, dial([]byte(halfProxyHeader))}
	settle("half a header, held", 3)
	open = append(open, dial(append(proxyV2Header(netip.MustParseAddrPort("198.51.100.7:2")), 0x16, 3)))
	settle("half a ClientHello, held", 4)
	// The held ones time out (limits.handshake_timeout); the served ones
	// are through their handshake.
	waitAdmission(t, func() bool { return handshaking() == 0 && active() == 2 },
		func() string {
			return fmt.Sprintf("%v active, %v handshaking; want the 2 served connections active and none handshaking", active(), handshaking())
		})
	for _, c := range open {
		c.Close()
	}
	waitAdmission(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return active() == 0 && handshaking() == 0 && s.open == 0 && s.handshakes == 0 && len(s.perIP) == 0
	}, func() string {
		s.mu.Lock()
		defer s.mu.Unlock()
		return fmt.Sprintf("after every client closed: %v active, %v handshaking, open %d, handshakes %d, per address %v; want all 0",
			active(), handshaking(), s.open, s.handshakes, s.perIP)
	})
}
