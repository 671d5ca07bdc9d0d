package e2esecurity

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// proxyV2 is a PROXY protocol v2 header for a TCP connection from src to
// dst, laid out as the specification says (and HAProxy's send-proxy-v2
// sends it).
func proxyV2(src, dst netip.AddrPort) []byte {
	h := []byte("\r\n\r\n\x00\r\nQUIT\n")
	fam, block := byte(0x11), append(src.Addr().AsSlice(), dst.Addr().AsSlice()...)
	if src.Addr().Is6() {
		fam = 0x21
	}
	block = binary.BigEndian.AppendUint16(block, src.Port())
	block = binary.BigEndian.AppendUint16(block, dst.Port())
	h = append(h, 0x21, fam)
	h = binary.BigEndian.AppendUint16(h, uint16(len(block)))
	return append(h, block...)
}

// dialAs returns a franz-go dialer that opens every connection with a
// PROXY header naming client as the connection's source, as a balancer
// in front of kproxy does; tlsCfg, when set, runs TLS after the header.
func dialAs(client netip.AddrPort, tlsCfg *tls.Config) func(ctx context.Context, network, host string) (net.Conn, error) {
	return func(ctx context.Context, network, host string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, host)
		if err != nil {
			return nil, err
		}
		dst, _ := netip.ParseAddrPort(host)
		if _, err := c.Write(proxyV2(client, dst)); err != nil {
			c.Close()
			return nil, err
		}
		if tlsCfg == nil {
			return c, nil
		}
		tc := tlsCfg.Clone()
		tc.ServerName = "127.0.0.1"
		return tls.Client(c, tc), nil
	}
}

// proxyProtocolConfig is a kproxy configuration in front of cluster with
// listeners.proxy_protocol set; listenerTLS is a flow mapping for
// listeners.tls ("" for none) and extra more top-level sections.
func proxyProtocolConfig(cluster *kfake.Cluster, mode, trusted, listenerTLS, extra string) string {
	if listenerTLS != "" {
		listenerTLS = "  tls: " + listenerTLS
	}
	return fmt.Sprintf(`
upstream:
  bootstrap_servers: [%q]
  dial_timeout: 5s
listeners:
  bind_host: 127.0.0.1
  proxy_protocol: {mode: %s, trusted_cidrs: [%q]}
%s
log: {level: debug}
%s
`, cluster.ListenAddrs()[0], mode, trusted, listenerTLS, extra)
}

// TestProxyProtocolClientAddressFeedsPolicy: behind a balancer every
// connection comes from the balancer's socket (127.0.0.1 here); the policy
// allows writes to cidr:198.51.100.0/24 only. A client whose header says
// 198.51.100.7 may write, one whose header says 203.0.113.9 may not, and
// one without a header (optional mode) is judged by its socket, 127.0.0.1,
// and may not either. kproxy's logs and the audit name the header's
// address.
func TestProxyProtocolClientAddressFeedsPolicy(t *testing.T) {
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "pp.t"))
	audit := kproxytest.NewAuditFile(t)
	yaml := proxyProtocolConfig(cluster, "optional", "127.0.0.1", "", "") + fmt.Sprintf(`
policy:
  default: deny
  rules:
    - {name: describe-all, principals: ["*"], allow: [describe], topics: ["*"]}
    - {name: behind-lb, principals: ["cidr:198.51.100.0/24"], allow: [write], topics: ["pp.t"]}
audit: {log_allowed: true, output: %q}
`, audit)
	px, logs := startWithPolicy(t, yaml)
	ctx := testkit.Context(t, 60*time.Second)

	produce := func(opts ...kgo.Opt) error {
		cl := newClient(t, append([]kgo.Opt{kgo.SeedBrokers(px.BootstrapAddr()), kgo.DisableIdempotentWrite(), kgo.RequestRetries(2), kgo.RecordRetries(2)}, opts...)...)
		return cl.ProduceSync(ctx, &kgo.Record{Topic: "pp.t", Value: []byte("v")}).FirstErr()
	}
	allowed := netip.MustParseAddrPort("198.51.100.7:41000")
	if err := produce(kgo.Dialer(dialAs(allowed, nil))); err != nil {
		t.Fatalf("client 198.51.100.7 behind the balancer: %v, want the write allowed by cidr:198.51.100.0/24", err)
	}
	if err := produce(kgo.Dialer(dialAs(netip.MustParseAddrPort("203.0.113.9:41001"), nil))); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("client 203.0.113.9 behind the balancer: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	if err := produce(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("client without a header (socket 127.0.0.1): %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	px.Stop() // every audit line written
	if a := audit.String(t); !strings.Contains(a, "198.51.100.7") || !strings.Contains(a, "203.0.113.9") {
		t.Errorf("the audit log does not name the clients' own addresses:\n%s", a)
	}
	if l := logs.String(); !strings.Contains(l, `"client":"198.51.100.7:41000"`) {
		t.Errorf("kproxy's log does not name the client from the header:\n%s", l)
	}
}

// TestProxyProtocolRefusals: on a required listener, a connection without
// a header, one from an untrusted peer and one that sends half a header
// and stalls are each closed with a log line naming the reason; nothing of
// theirs reaches the Kafka parser (the protocol_error count stays put).
func TestProxyProtocolRefusals(t *testing.T) {
	cluster := testkit.Cluster(t, 1)
	for _, tc := range []struct {
		name, trusted string
		send          []byte
		want          string
	}{
		{"no header", "127.0.0.1", []byte{0, 0, 0, 20, 0, 18, 0, 3}, "no PROXY protocol header"},
		{"untrusted peer", "10.0.0.0/8", proxyV2(netip.MustParseAddrPort("198.51.100.7:1"), netip.MustParseAddrPort("127.0.0.1:2")), "not in listeners.proxy_protocol.trusted_cidrs"},
		{"half a header", "127.0.0.1", proxyV2(netip.MustParseAddrPort("198.51.100.7:1"), netip.MustParseAddrPort("127.0.0.1:2"))[:14], "not received in time"},
		{"malformed", "127.0.0.1", []byte("PROXY TCP4 198.51.100.7 nowhere 1 2\r\n\x00\x00\x00\x14"), "malformed PROXY protocol header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logbuf.Buffer{}
			px := kproxytest.Start(t, proxyProtocolConfig(cluster, "required", tc.trusted, "", "limits: {handshake_timeout: 300ms}"), kproxytest.WithLog(logs, zerolog.DebugLevel))
			c := dialRaw(t, px.BootstrapAddr())
			c.Write(tc.send)
			if _, err := testkit.WaitClosed(c, 5*time.Second); err != nil {
				t.Fatalf("connection not closed: %v", err)
			}
			if !waitFor(5*time.Second, func() bool { return strings.Contains(logs.String(), tc.want) }) {
				t.Fatalf("no log line saying %q:\n%s", tc.want, logs.String())
			}
			if n := closedTotal(t, px.Registry, "proxy_protocol"); n != 1 {
				t.Errorf("kproxy_connections_closed_total{reason=proxy_protocol} = %v, want 1", n)
			}
			if n := closedTotal(t, px.Registry, "protocol_error"); n != 0 {
				t.Errorf("%v connections reached the Kafka parser and failed there", n)
			}
		})
	}
}

// TestProxyProtocolBeforeTLS: on a TLS listener the header comes first,
// in the clear, then the TLS handshake; the per-address connection limit
// counts the header's address, not the balancer's.
func TestProxyProtocolBeforeTLS(t *testing.T) {
	p := certs.New(t)
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "pp.tls"))
	yaml := proxyProtocolConfig(cluster, "required", "127.0.0.0/8",
		fmt.Sprintf("{cert_file: %s, key_file: %s}", p.ServerCert, p.ServerKey), "limits: {max_connections_per_ip: 1}")
	px := kproxytest.Start(t, yaml, kproxytest.WithLog(&logbuf.Buffer{}, zerolog.WarnLevel))
	ctx := testkit.Context(t, 60*time.Second)

	// One connection per client address is allowed: two clients behind
	// the same balancer socket address are still two addresses.
	var clients []*rawConn
	for i, addr := range []string{"198.51.100.1:40000", "198.51.100.2:40000"} {
		conn, err := dialAs(netip.MustParseAddrPort(addr), clientTLS(t, p, false))(ctx, "tcp", px.BootstrapAddr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		c := &rawConn{Conn: conn, ClientID: fmt.Sprintf("tls-%d", i)}
		if _, err := c.APIVersions(); err != nil {
			t.Fatalf("client %s: ApiVersions over TLS after the PROXY header: %v", addr, err)
		}
		clients = append(clients, c)
	}
	// A second connection from 198.51.100.1 is over the limit.
	conn, err := dialAs(netip.MustParseAddrPort("198.51.100.1:40001"), clientTLS(t, p, false))(ctx, "tcp", px.BootstrapAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := (&rawConn{Conn: conn, ClientID: "third"}).APIVersions(); err == nil {
		t.Fatal("a second connection from 198.51.100.1 was served; limits.max_connections_per_ip is 1 per client address")
	}
	if n := closedTotal(t, px.Registry, "connection_limit"); n != 1 {
		t.Errorf("kproxy_connections_closed_total{reason=connection_limit} = %v, want 1", n)
	}
	_ = clients
}

// TestProxyProtocolShutdownClosesWaiting: a connection still waiting for
// its header (here one that sends nothing, within a long
// handshake_timeout) does not hold up Shutdown: it is closed at once.
func TestProxyProtocolShutdownClosesWaiting(t *testing.T) {
	cluster := testkit.Cluster(t, 1)
	kp := kproxytest.Start(t, proxyProtocolConfig(cluster, "required", "127.0.0.1", "", "limits: {handshake_timeout: 1m}"),
		kproxytest.WithLog(&logbuf.Buffer{}, zerolog.TraceLevel), kproxytest.Unready())
	c := dialRaw(t, kp.BootstrapAddr())
	time.Sleep(200 * time.Millisecond) // accepted, waiting for the header
	start := time.Now()
	if err := kp.Stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Shutdown took %s with a connection waiting for its PROXY header", took)
	}
	if _, err := testkit.WaitClosed(c, 2*time.Second); err != nil {
		t.Fatalf("the waiting connection was not closed: %v", err)
	}
}
