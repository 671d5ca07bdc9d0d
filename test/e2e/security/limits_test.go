package e2esecurity

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
	"github.com/kproxy/kproxy/internal/wire"
)

// handshakeTimeout leaves room for kproxy's own upstream login, which runs
// inside it (PBKDF2 is slow under -race on a loaded machine).
const handshakeTimeout = 1500 * time.Millisecond

// closedWithin checks that conn is closed by kproxy (EOF or reset, no
// bytes first) no sooner than atLeast and within atMost of now.
func closedWithin(t *testing.T, what string, conn net.Conn, atLeast, atMost time.Duration) {
	t.Helper()
	elapsed, err := testkit.WaitClosed(conn, atMost+2*time.Second)
	switch {
	case err != nil:
		t.Errorf("%s: %v", what, err)
	case elapsed < atLeast:
		t.Errorf("%s: closed after %s, before %s", what, elapsed, atLeast)
	case elapsed > atMost:
		t.Errorf("%s: closed after %s, want within %s", what, elapsed, atMost)
	}
}

// TestHandshakeDeadline: limits.handshake_timeout bounds how long a client
// may take to secure its connection. A client that sends no ClientHello, a
// client that completes TLS but never authenticates, and one that stops in
// the middle of SASL are all closed after it; a request other than
// ApiVersions or SaslHandshake before authentication closes the connection
// at once, unanswered.
func TestHandshakeDeadline(t *testing.T) {
	p := certs.New(t)
	cluster := secureUpstream(t, p)
	logs := &logbuf.Buffer{}
	yaml := proxyYAML(t, p, cluster.ListenAddrs(), "none", "terminate") +
		fmt.Sprintf("limits: {handshake_timeout: %s}\n", handshakeTimeout)
	px := kproxytest.Start(t, yaml, kproxytest.WithLog(logs, zerolog.DebugLevel))
	addr := px.BootstrapAddr()
	// Generous upper bound: -race on a loaded machine.
	const slack = 2500 * time.Millisecond
	tlsFailed, saslFailed := closedTotal(t, px.Registry, "tls_failed"), closedTotal(t, px.Registry, "sasl_failed")

	t.Run("no ClientHello", func(t *testing.T) {
		c := dialRaw(t, addr)
		closedWithin(t, "silent TCP client", c, handshakeTimeout-100*time.Millisecond, handshakeTimeout+slack)
	})

	t.Run("TLS but no SASL", func(t *testing.T) {
		c, err := dialRawTLS(t, addr, clientTLS(t, p, false))
		if err != nil {
			t.Fatal(err)
		}
		closedWithin(t, "client idle after TLS", c, handshakeTimeout-200*time.Millisecond, handshakeTimeout+slack)
	})

	t.Run("stalls inside SASL", func(t *testing.T) {
		c, err := dialRawTLS(t, addr, clientTLS(t, p, false))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := c.APIVersions(); err != nil {
			t.Fatalf("ApiVersions before authentication must be answered: %v", err)
		}
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.SetVersion(1)
		hs.Mechanism = "SCRAM-SHA-512"
		resp, err := c.RoundTrip(hs)
		if err != nil {
			t.Fatal(err)
		}
		if code := resp.(*kmsg.SASLHandshakeResponse).ErrorCode; code != 0 {
			t.Fatalf("SaslHandshake error %d", code)
		}
		// Nothing more: the deadline counts from the TLS handshake.
		closedWithin(t, "client stalled after SaslHandshake", c, handshakeTimeout-200*time.Millisecond-time.Since(start), handshakeTimeout+slack)
	})

	t.Run("request before authentication", func(t *testing.T) {
		c, err := dialRawTLS(t, addr, clientTLS(t, p, false))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Send(kmsg.NewPtrMetadataRequest()); err != nil {
			t.Fatal(err)
		}
		closedWithin(t, "Metadata before authentication", c, 0, handshakeTimeout+slack)
		if !waitFor(5*time.Second, func() bool { return strings.Contains(logs.String(), "Metadata request before SASL authentication") }) {
			t.Errorf("kproxy did not log why it closed the connection:\n%s", logs.String())
		}
	})

	t.Run("SaslAuthenticate before SaslHandshake", func(t *testing.T) {
		c, err := dialRawTLS(t, addr, clientTLS(t, p, false))
		if err != nil {
			t.Fatal(err)
		}
		auth := kmsg.NewPtrSASLAuthenticateRequest()
		auth.SetVersion(2)
		auth.SASLAuthBytes = []byte("n,,n=alice,r=abc")
		resp, err := c.RoundTrip(auth)
		if err != nil {
			t.Fatal(err)
		}
		if code := resp.(*kmsg.SASLAuthenticateResponse).ErrorCode; code != wire.ErrCodeIllegalSASLState {
			t.Errorf("SaslAuthenticate out of turn answered with %d, want ILLEGAL_SASL_STATE", code)
		}
		closedWithin(t, "after ILLEGAL_SASL_STATE", c, 0, handshakeTimeout+slack)
	})

	if !waitFor(5*time.Second, func() bool { return closedTotal(t, px.Registry, "tls_failed") >= tlsFailed+1 }) {
		t.Errorf("tls_failed closes: %v, want at least %v", closedTotal(t, px.Registry, "tls_failed"), tlsFailed+1)
	}
	if n := testkit.MetricValue(t, px.Registry, "kproxy_tls_handshake_failures_total", "side", "client"); n < 1 {
		t.Errorf("kproxy_tls_handshake_failures_total{side=client} = %v after a stalled handshake, want > 0", n)
	}
	if !waitFor(5*time.Second, func() bool { return closedTotal(t, px.Registry, "sasl_failed") >= saslFailed+4 }) {
		t.Errorf("sasl_failed closes: %v, want at least %v", closedTotal(t, px.Registry, "sasl_failed"), saslFailed+4)
	}
	if strings.Contains(logs.String(), `"level":"panic"`) {
		t.Error("kproxy logged a panic")
	}
}

// TestConnectionLimitPerIP: with max_connections_per_ip 5, a sixth
// connection from 127.0.0.1 is closed at once and counted, while the five
// keep working; once one closes, a new one is served.
func TestConnectionLimitPerIP(t *testing.T) {
	cluster := testkit.Cluster(t, 1)
	px := kproxytest.Start(t, testkit.Config{Upstream: cluster.ListenAddrs(), Log: "{level: error}",
		Extra: "limits: {max_connections_per_ip: 5}\n"}.YAML())
	addr := px.BootstrapAddr()

	conns := make([]*rawConn, 5)
	for i := range conns {
		conns[i] = dialRaw(t, addr)
		if _, err := conns[i].APIVersions(); err != nil {
			t.Fatalf("connection %d of 5: %v", i+1, err)
		}
	}
	sixth := dialRaw(t, addr)
	sixth.Send(kmsg.NewPtrApiVersionsRequest()) // may already fail: it is closed
	closedWithin(t, "sixth connection", sixth, 0, time.Second)
	if n := closedTotal(t, px.Registry, "connection_limit"); n != 1 {
		t.Errorf(`kproxy_connections_closed_total{reason="connection_limit"} = %v, want 1`, n)
	}
	for i, c := range conns {
		if _, err := c.APIVersions(); err != nil {
			t.Errorf("connection %d after the sixth was refused: %v", i+1, err)
		}
	}

	// Freeing a slot lets the next connection in.
	conns[0].Close()
	if !waitFor(5*time.Second, func() bool {
		return testkit.MetricValue(t, px.Registry, "kproxy_connections_active", "listener", "bootstrap") == 4
	}) {
		t.Fatalf("active connections %v after one closed, want 4", testkit.MetricValue(t, px.Registry, "kproxy_connections_active", "listener", "bootstrap"))
	}
	again := dialRaw(t, addr)
	if _, err := again.APIVersions(); err != nil {
		t.Errorf("a connection after one of the five closed: %v", err)
	}
	if n := closedTotal(t, px.Registry, "connection_limit"); n != 1 {
		t.Errorf("connection_limit closes %v after a slot was freed, want still 1", n)
	}
}
