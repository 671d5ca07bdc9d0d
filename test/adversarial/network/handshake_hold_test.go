package network

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// networkMetric is the value of one series (name and labels as the
// Prometheus text writes them, e.g. `x{reason="y"}`) on kproxy's admin
// endpoint, and whether it is there.
func networkMetric(t *testing.T, admin, series string) (float64, bool) {
	t.Helper()
	return testkit.ScrapeSeries(t, admin, series)
}

// networkWaitMetric waits up to 30 seconds for series to equal want.
func networkWaitMetric(t *testing.T, admin, series string, want float64) {
	t.Helper()
	var got float64
	if !testkit.WaitFor(30*time.Second, func() bool { got, _ = networkMetric(t, admin, series); return got == want }) {
		t.Fatalf("%s = %v within 30s, want %v", series, got, want)
	}
}

// proxyV2From is a PROXY protocol v2 header naming client as the source.
func proxyV2From(client netip.AddrPort) []byte {
	h := []byte("\r\n\r\n\x00\r\nQUIT\n\x21\x11\x00\x0c")
	h = append(append(h, client.Addr().AsSlice()...), 127, 0, 0, 1)
	h = binary.BigEndian.AppendUint16(h, client.Port())
	return binary.BigEndian.AppendUint16(h, 9092)
}

// halfProxySignature is the first half of the PROXY v2 signature.
const halfProxySignature = "\r\n\r\n\x00\r"

// holdFlood opens n connections from local (a loopback address) that each
// write first (half a handshake) and stop. It returns them and a count of
// those kproxy has closed so far.
func holdFlood(t *testing.T, addr, local, first string, n int) ([]net.Conn, *atomic.Int64) {
	t.Helper()
	closed := new(atomic.Int64)
	conns := make([]net.Conn, 0, n)
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 10 * time.Second}
	for range n {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %s from %s: %v", addr, local, err)
		}
		t.Cleanup(func() { c.Close() })
		c.Write([]byte(first)) // a refused one may be closed already
		conns = append(conns, c)
		go func() {
			// kproxy closing it ends this read; so does the test closing it.
			if _, err := c.Read(make([]byte, 1)); err != nil && !errors.Is(err, net.ErrClosed) {
				closed.Add(1)
			}
		}()
	}
	return conns, closed
}

// kafkaThroughHeader connects from local, sends a PROXY header naming
// client and completes an ApiVersions round trip: what a balancer's
// client does.
func kafkaThroughHeader(t *testing.T, addr, local string, client netip.AddrPort) error {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 10 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Write(proxyV2From(client)); err != nil {
		return err
	}
	c.SetDeadline(time.Now().Add(20 * time.Second))
	raw := &testkit.RawConn{Conn: c, ClientID: "network-legit"}
	resp, err := raw.RoundTrip(kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		return err
	}
	if code := resp.(*kmsg.ApiVersionsResponse).ErrorCode; code != 0 {
		return fmt.Errorf("ApiVersions error code %d", code)
	}
	return nil
}

func holdConfig(t *testing.T, limits string) string {
	return testkit.Config{Upstream: advkit.Kfake(t, 1), ListenerKeys: `proxy_protocol: {mode: required, trusted_cidrs: ["127.0.0.0/8"]}`,
		Admin: true, Log: "{level: info}", Extra: fmt.Sprintf("limits: {handshake_timeout: 5m, %s}\n", limits)}.YAML()
}

// A trusted balancer's peer opens 150 connections and sends half a PROXY
// header on each. As Kafka's max.connections.per.ip and max.connections
// count a socket from accept, kproxy holds 5 (max_connections_per_ip) and
// closes the other 145 at once, unread; a client behind another address
// is still served, and once the attacker leaves the counts return to 0.
func TestHalfProxyHeadersHeldWithinConnectionLimits(t *testing.T) {
	kp := advkit.Start(t, holdConfig(t, "max_connections: 20, max_connections_per_ip: 5"))
	const flood, perIP = 150, 5
	conns, closed := holdFlood(t, kp.Bootstrap, "127.0.0.1", halfProxySignature, flood)
	if !testkit.WaitFor(30*time.Second, func() bool { return closed.Load() == flood-perIP }) {
		t.Fatalf("kproxy closed %d of %d connections holding half a PROXY header within 30s; want %d (all beyond max_connections_per_ip %d)",
			closed.Load(), flood, flood-perIP, perIP)
	}
	networkWaitMetric(t, kp.Admin, `kproxy_connections_active{listener="bootstrap"}`, perIP)
	networkWaitMetric(t, kp.Admin, `kproxy_connections_closed_total{reason="connection_limit"}`, flood-perIP)
	networkWaitMetric(t, kp.Admin, `kproxy_connections_handshaking`, perIP)
	kp.WaitLog("the per-address refusal", testkit.MessagePrefix("connection refused: limits.max_connections_per_ip reached"))

	// Another balancer address still gets its clients in.
	if err := kafkaThroughHeader(t, kp.Bootstrap, "127.0.0.2", netip.MustParseAddrPort("198.51.100.20:1")); err != nil {
		t.Fatalf("a client behind 127.0.0.2 while 127.0.0.1 holds its %d: %v", perIP, err)
	}
	for _, c := range conns {
		c.Close()
	}
	networkWaitMetric(t, kp.Admin, `kproxy_connections_active{listener="bootstrap"}`, 0)
	networkWaitMetric(t, kp.Admin, `kproxy_connections_handshaking`, 0)
	if err := kafkaThroughHeader(t, kp.Bootstrap, "127.0.0.1", netip.MustParseAddrPort("198.51.100.21:1")); err != nil {
		t.Fatalf("a client behind 127.0.0.1 once the attacker left: %v", err)
	}
}

// Without connection limits, limits.max_handshakes still bounds what
// peers holding half-written handshakes can hold: 10 of 50, the rest
// closed unread with a log line and reason handshake_limit. A client
// that completes its handshake is not counted once through it.
func TestHalfProxyHeadersHeldWithinMaxHandshakes(t *testing.T) {
	kp := advkit.Start(t, holdConfig(t, "max_handshakes: 10"))
	// A served client, through its handshake, holds no handshake slot.
	served := testkit.DialRaw(t, kp.Bootstrap, "network-served")
	served.Write(proxyV2From(netip.MustParseAddrPort("198.51.100.30:1")))
	served.MustRoundTrip(t, kmsg.NewPtrApiVersionsRequest())
	networkWaitMetric(t, kp.Admin, `kproxy_connections_handshaking`, 0)

	const flood, limit = 50, 10
	conns, closed := holdFlood(t, kp.Bootstrap, "127.0.0.1", halfProxySignature, flood)
	if !testkit.WaitFor(30*time.Second, func() bool { return closed.Load() == flood-limit }) {
		t.Fatalf("kproxy closed %d of %d connections holding half a header within 30s; want %d (beyond max_handshakes %d)",
			closed.Load(), flood, flood-limit, limit)
	}
	networkWaitMetric(t, kp.Admin, `kproxy_connections_handshaking`, limit)
	networkWaitMetric(t, kp.Admin, `kproxy_connections_closed_total{reason="handshake_limit"}`, flood-limit)
	networkWaitMetric(t, kp.Admin, `kproxy_connections_active{listener="bootstrap"}`, limit+1)
	l := kp.WaitLog("the handshake-limit refusal", testkit.MessagePrefix("connection refused: limits.max_handshakes"))
	if l["reason"] != "handshake_limit" || l["listener"] != "bootstrap" {
		t.Errorf("refusal line %v: want reason handshake_limit, listener bootstrap", map[string]any(l))
	}
	// The served client is unaffected.
	served.MustRoundTrip(t, kmsg.NewPtrApiVersionsRequest())
	for _, c := range conns {
		c.Close()
	}
	networkWaitMetric(t, kp.Admin, `kproxy_connections_handshaking`, 0)
	if err := kafkaThroughHeader(t, kp.Bootstrap, "127.0.0.1", netip.MustParseAddrPort("198.51.100.31:1")); err != nil {
		t.Fatalf("a new client once the attacker left: %v", err)
	}
}

// The same bound holds on the SNI listener, without PROXY headers: 30
// connections that send the first bytes of a TLS record and stop, with
// limits.max_handshakes 10, leave 10 held and 20 closed unread, and a
// client naming the bootstrap host is served once they are gone.
func TestHalfTLSHandshakesHeldWithinMaxHandshakes(t *testing.T) {
	cfg, sniAddr, pki := sniLookalikeConfig(t)
	kp := advkit.Start(t, cfg+"limits: {handshake_timeout: 5m, max_handshakes: 10}\n")
	const flood, limit = 30, 10
	conns, closed := holdFlood(t, sniAddr, "127.0.0.1", "\x16\x03\x01\x00", flood)
	if !testkit.WaitFor(30*time.Second, func() bool { return closed.Load() == flood-limit }) {
		t.Fatalf("kproxy closed %d of %d connections holding half a TLS record within 30s; want %d (beyond max_handshakes %d)",
			closed.Load(), flood, flood-limit, limit)
	}
	networkWaitMetric(t, kp.Admin, `kproxy_connections_handshaking`, limit)
	networkWaitMetric(t, kp.Admin, `kproxy_connections_active{listener="sni"}`, limit)
	networkWaitMetric(t, kp.Admin, `kproxy_connections_closed_total{reason="handshake_limit"}`, flood-limit)
	for _, c := range conns {
		c.Close()
	}
	networkWaitMetric(t, kp.Admin, `kproxy_connections_handshaking`, 0)
	c, err := testkit.DialRawTLS(t, sniAddr, "network-sni-after", &tls.Config{ServerName: sniBootstrap, RootCAs: pki.Pool(), MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("a client of the SNI listener once the attacker left: %v", err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	c.MustRoundTrip(t, kmsg.NewPtrApiVersionsRequest())
}
