package auth

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

func startKfake(t *testing.T, opts ...kfake.Opt) string {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.EnableSASL()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func upstreamMech(t *testing.T, mech, user, pass string) sasl.Mechanism {
	t.Helper()
	m, err := UpstreamMechanism(mech, user, pass)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// metadataWorks sends a Metadata request on conn, which kfake refuses (by
// closing) unless the connection is authenticated.
func metadataWorks(t *testing.T, conn net.Conn) {
	t.Helper()
	uc := &upstreamConn{conn: conn, clientID: "test", corr: 100}
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	defer conn.SetDeadline(time.Time{})
	resp, err := uc.RoundTrip(&kmsg.MetadataRequest{Version: 12})
	if err != nil {
		t.Fatalf("metadata after authentication: %v", err)
	}
	if len(resp.(*kmsg.MetadataResponse).Brokers) == 0 {
		t.Fatal("metadata lists no brokers")
	}
}

func TestAuthenticateConnKfake(t *testing.T) {
	addr := startKfake(t,
		kfake.Superuser(ScramSHA256, "kuser256", "kpass256"),
		kfake.Superuser(ScramSHA512, "kuser512", "kpass512"),
		kfake.Superuser(Plain, "kplain", "kpassplain"),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct{ mech, user, pass string }{
		{ScramSHA256, "kuser256", "kpass256"},
		{ScramSHA512, "kuser512", "kpass512"},
		{Plain, "kplain", "kpassplain"},
	} {
		conn := dial(t, addr)
		session, err := AuthenticateConn(ctx, conn, upstreamMech(t, tc.mech, tc.user, tc.pass), "kproxy-test")
		if err != nil || session.Lifetime != 0 {
			t.Fatalf("%s right credentials: lifetime %v, %v", tc.mech, session.Lifetime, err)
		}
		metadataWorks(t, conn)

		// kfake closes the connection on wrong credentials rather than
		// answering SASL_AUTHENTICATION_FAILED (real brokers answer
		// first; see TestAuthenticateConnErrorCodes).
		conn = dial(t, addr)
		_, err = AuthenticateConn(ctx, conn, upstreamMech(t, tc.mech, tc.user, "wrong-pass-xyz"), "kproxy-test")
		if err == nil || !(errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
			t.Fatalf("%s wrong credentials: %v", tc.mech, err)
		}
		assertNoSecret(t, err.Error(), "wrong-pass-xyz", tc.pass)
	}
}

func TestAuthenticateConnKfakeSessionLifetime(t *testing.T) {
	addr := startKfake(t,
		kfake.Superuser(ScramSHA256, "kuser", "kpass"),
		kfake.BrokerConfigs(map[string]string{"connections.max.reauth.ms": "60000"}),
	)
	conn := dial(t, addr)
	session, err := AuthenticateConn(context.Background(), conn, upstreamMech(t, ScramSHA256, "kuser", "kpass"), "")
	if err != nil || session.Lifetime != time.Minute {
		t.Fatalf("lifetime %v, %v; want 1m", session.Lifetime, err)
	}
}

// TestReauthenticateKfake: a logged-in connection with a session lifetime
// re-authenticates in place (KIP-368), gets a new lifetime, and keeps
// serving; a re-authentication as another user is refused.
func TestReauthenticateKfake(t *testing.T) {
	addr := startKfake(t,
		kfake.Superuser(ScramSHA256, "kuser", "kpass"),
		kfake.Superuser(ScramSHA256, "other", "opass"),
		kfake.BrokerConfigs(map[string]string{"connections.max.reauth.ms": "60000"}),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn := dial(t, addr)
	mech := upstreamMech(t, ScramSHA256, "kuser", "kpass")
	first, err := AuthenticateConn(ctx, conn, mech, "kproxy-test")
	if err != nil || first.AuthenticateVersion < 1 {
		t.Fatalf("login: %+v, %v", first, err)
	}
	uc := &upstreamConn{conn: conn, clientID: "kproxy-test", corr: 10}
	for range 3 {
		again, err := Reauthenticate(ctx, uc, mech, first.AuthenticateVersion, addr)
		if err != nil || again.Lifetime != time.Minute {
			t.Fatalf("re-authentication: %+v, %v", again, err)
		}
		metadataWorks(t, conn)
	}
	_, err = Reauthenticate(ctx, uc, upstreamMech(t, ScramSHA256, "other", "opass"), first.AuthenticateVersion, addr)
	if err == nil {
		t.Fatal("re-authentication as another user succeeded")
	}
}

// fakeBroker answers ApiVersions, SaslHandshake and SaslAuthenticate on
// conn with an Authenticator, the way the proxy is meant to use one, and
// closes after any error response.
func fakeBroker(t *testing.T, conn net.Conn, a *Authenticator, authMax int16, sawAuthVersion *int16) {
	defer conn.Close()
	for {
		var prefix [4]byte
		if _, err := io.ReadFull(conn, prefix[:]); err != nil {
			return
		}
		size, err := protocol.ParseFrameSize(prefix[:], MaxTokenSize+1024)
		if err != nil {
			t.Errorf("fake broker: %v", err)
			return
		}
		body := make([]byte, size)
		if _, err := io.ReadFull(conn, body); err != nil {
			return
		}
		h, err := wire.ParseRequestHeader(body)
		if err != nil {
			t.Errorf("fake broker: %v", err)
			return
		}
		req, err := protocol.DecodeRequest(h.APIKey, h.APIVersion, body[h.Len:])
		if err != nil {
			t.Errorf("fake broker: %v", err)
			return
		}
		var resp kmsg.Response
		failed := false
		switch r := req.(type) {
		case *kmsg.ApiVersionsRequest:
			av := &kmsg.ApiVersionsResponse{Version: r.Version}
			for _, k := range []struct{ key, max int16 }{{18, 3}, {17, 1}, {36, authMax}, {3, 12}} {
				if k.max >= 0 {
					av.ApiKeys = append(av.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: k.key, MaxVersion: k.max})
				}
			}
			resp = av
		case *kmsg.SASLHandshakeRequest:
			hs := a.Handshake(r)
			resp, failed = hs, hs.ErrorCode != 0
		case *kmsg.SASLAuthenticateRequest:
			*sawAuthVersion = r.Version
			ar, _, err := a.Authenticate(r)
			resp, failed = ar, err != nil
		default:
			t.Errorf("fake broker: unexpected %T", req)
			return
		}
		if _, err := conn.Write(protocol.AppendResponseFrame(nil, h.CorrelationID, resp)); err != nil || failed {
			return
		}
	}
}

func TestAuthenticateConnErrorCodes(t *testing.T) {
	for _, tc := range []struct {
		name             string
		mechs            []string
		authMax          int16
		mech, user, pass string
		wantCode         int16
		wantIs           error
		wantAuthVersion  int16
	}{
		{"scram ok v2", []string{ScramSHA512}, 2, ScramSHA512, "alice", "alice-secret", 0, nil, 2},
		{"plain ok v0 only", []string{Plain}, 0, Plain, "bob", "bob-secret", 0, nil, 0},
		{"wrong password", []string{ScramSHA512}, 1, ScramSHA512, "alice", "bad-pass-zz", 58, ErrAuthenticationFailed, 1},
		{"unknown user", []string{ScramSHA256}, 2, ScramSHA256, "eve", "bad-pass-zz", 58, kerr.SaslAuthenticationFailed, 2},
		{"mechanism not enabled", []string{ScramSHA512}, 2, Plain, "alice", "alice-secret", 33, ErrUnsupportedMechanism, -1},
		{"no SaslAuthenticate", []string{Plain}, -1, Plain, "alice", "alice-secret", -1, nil, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newTestAuthenticator(t, 0, nil, tc.mechs...)
			client, server := net.Pipe()
			defer client.Close()
			saw := int16(-1)
			done := make(chan struct{})
			go func() { defer close(done); fakeBroker(t, server, a, tc.authMax, &saw) }()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := AuthenticateConn(ctx, client, upstreamMech(t, tc.mech, tc.user, tc.pass), "kproxy")
			client.Close()
			<-done
			switch {
			case tc.wantCode == 0 && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantCode == 0 && a.User() != tc.user:
				t.Fatalf("broker authenticated %q", a.User())
			case tc.wantCode == -1:
				if err == nil || !strings.Contains(err.Error(), "no SaslAuthenticate") {
					t.Fatalf("want the missing SaslAuthenticate reported, got %v", err)
				}
			case tc.wantCode > 0:
				var ue *UpstreamError
				if !errors.As(err, &ue) || ue.Code != tc.wantCode || !errors.Is(err, tc.wantIs) {
					t.Fatalf("error %v; want code %d wrapping %v", err, tc.wantCode, tc.wantIs)
				}
				assertNoSecret(t, err.Error(), tc.pass)
				if tc.wantCode == 33 && !strings.Contains(err.Error(), ScramSHA512) {
					t.Fatalf("%q does not list what the upstream offers", err)
				}
				if tc.wantCode == 58 && !strings.Contains(err.Error(), "SASL_AUTHENTICATION_FAILED") {
					t.Fatalf("%q does not name the code", err)
				}
			}
			if saw != tc.wantAuthVersion {
				t.Fatalf("SaslAuthenticate v%d used, want v%d", saw, tc.wantAuthVersion)
			}
		})
	}
}

func TestAuthenticateConnContext(t *testing.T) {
	// An upstream that never answers: the context's deadline ends it.
	client, server := net.Pipe()
	defer server.Close()
	defer client.Close()
	go io.Copy(io.Discard, server)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := AuthenticateConn(ctx, client, upstreamMech(t, Plain, "u", "p"), "")
	if err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("silent upstream: %v after %v", err, time.Since(start))
	}

	// Cancellation without a deadline interrupts too.
	client2, server2 := net.Pipe()
	defer server2.Close()
	defer client2.Close()
	go io.Copy(io.Discard, server2)
	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel2)
	_, err = AuthenticateConn(ctx2, client2, upstreamMech(t, Plain, "u", "p"), "")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestUpstreamMechanism(t *testing.T) {
	for _, m := range []string{Plain, ScramSHA256, ScramSHA512} {
		mech, err := UpstreamMechanism(m, "u", "p")
		if err != nil || mech.Name() != m {
			t.Errorf("%s: %v", m, err)
		}
	}
	if _, err := UpstreamMechanism("GSSAPI", "u", "p"); !errors.Is(err, ErrUnsupportedMechanism) {
		t.Errorf("GSSAPI: %v", err)
	}
	if _, err := UpstreamMechanism(Plain, "u", ""); err == nil {
		t.Error("empty password accepted")
	}
}
