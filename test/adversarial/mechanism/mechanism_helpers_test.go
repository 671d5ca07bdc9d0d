package mechanism

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/proxy"
	"github.com/kproxy/kproxy/sasl"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// hostileMechanism is the program's mechanism under attack. Its one
// client message is a command, so that a client chooses how the server
// side behaves:
//
//	user:NAME      authenticates NAME
//	more           answers a challenge and waits for another message
//	block          blocks until the test releases it
//	panic          panics
//	big-challenge  answers a 1 MiB challenge
//	big-user       authenticates a 1 MiB user name
const hostileMechanism = "X-HOSTILE"

// hugeMessage is larger than any token kproxy accepts (512 KiB, Kafka's
// sasl.server.max.receive.size).
const hugeMessage = 1 << 20

// hostileSession is hostileMechanism's server side.
type hostileSession struct {
	blocked chan<- struct{} // told when a Step blocks
	release <-chan struct{} // closed when the test ends: a blocked Step returns
	user    string
}

func (s *hostileSession) Step(msg []byte) ([]byte, bool, error) {
	cmd := string(msg)
	switch {
	case strings.HasPrefix(cmd, "user:"):
		s.user = strings.TrimPrefix(cmd, "user:")
		return nil, true, nil
	case cmd == "more":
		return []byte("go on"), false, nil
	case cmd == "block":
		s.blocked <- struct{}{}
		<-s.release
		return nil, false, fmt.Errorf("released")
	case cmd == "panic":
		panic("hostile session: a client asked for it")
	case cmd == "big-challenge":
		return make([]byte, hugeMessage), false, nil
	case cmd == "big-user":
		s.user = strings.Repeat("u", hugeMessage)
		return nil, true, nil
	}
	return nil, false, fmt.Errorf("unknown command of %d bytes", len(msg))
}

func (s *hostileSession) User() string { return s.user }

// hostileKproxy is kproxy started through proxy.Run with
// hostileMechanism enabled on its listeners and limits (flow-style keys of
// the limits section), logging at debug: a close for the same reason soon
// after another is logged at debug only. blocked is told of every Step that blocks; they
// return when the test ends, before kproxy is stopped.
type hostileKproxy struct {
	*testkit.Binary
	blocked <-chan struct{}
}

func startHostile(t *testing.T, limits string) hostileKproxy {
	t.Helper()
	cluster := testkit.Cluster(t, 1)
	cfg := testkit.Config{Upstream: cluster.ListenAddrs(), ListenerKeys: "sasl: {mechanisms: [" + hostileMechanism + "]}",
		Admin: true, Log: "{level: debug, format: json}", Extra: "limits: {" + limits + "}\n"}.YAML()
	path := testkit.WriteConfig(t, cfg)
	blocked := make(chan struct{}, 16)
	release := make(chan struct{})
	mech := sasl.Mechanism{Name: hostileMechanism, NewSession: func() sasl.Session {
		return &hostileSession{blocked: blocked, release: release}
	}}
	kp := testkit.ServeInProcess(t, func(ctx context.Context, log io.Writer) error {
		return proxy.Run(ctx, proxy.Options{ConfigPath: path, Mechanisms: []sasl.Mechanism{mech}, LogOutput: log})
	})
	t.Cleanup(func() { close(release) }) // runs before ServeInProcess's stop
	kp.WaitReady()
	return hostileKproxy{Binary: kp, blocked: blocked}
}

// handshake opens a connection to addr and starts hostileMechanism on it
// (SaslHandshake v1), failing the test unless kproxy accepts.
func handshake(t *testing.T, addr, clientID string) *testkit.RawConn {
	t.Helper()
	c := testkit.DialRaw(t, addr, clientID)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = hostileMechanism
	if resp := c.MustRoundTrip(t, hs).(*kmsg.SASLHandshakeResponse); resp.ErrorCode != 0 {
		t.Fatalf("SaslHandshake %s: %v", hostileMechanism, kerr.ErrorForCode(resp.ErrorCode))
	}
	return c
}

// authenticateRequest is a SaslAuthenticate v2 request carrying msg.
func authenticateRequest(msg []byte) *kmsg.SASLAuthenticateRequest {
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.SetVersion(2)
	req.SASLAuthBytes = msg
	return req
}

// authenticate sends msg in a SaslAuthenticate v2 request on c and returns
// kproxy's answer.
func authenticate(c *testkit.RawConn, msg []byte) (*kmsg.SASLAuthenticateResponse, error) {
	resp, err := c.RoundTrip(authenticateRequest(msg))
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.SASLAuthenticateResponse), nil
}

// mustLogIn logs a new client in as user and checks that it is served
// (ApiVersions after the login): kproxy keeps serving the clients the
// attack is not aimed at.
func mustLogIn(t *testing.T, addr, user string) {
	t.Helper()
	c := handshake(t, addr, "mechanism-served")
	resp, err := authenticate(c, []byte("user:"+user))
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("a client logging in as %s: %v %+v", user, err, resp)
	}
	c.MustRoundTrip(t, kmsg.NewPtrApiVersionsRequest())
}

// waitClosed waits up to 30 seconds (far beyond any handshake timeout the
// tests set) for kproxy to close c.
func waitClosed(t *testing.T, c *testkit.RawConn, what string) {
	t.Helper()
	if !advkit.ClosedWithin(c, 30*time.Second) {
		t.Fatalf("%s: kproxy did not close the connection within 30s", what)
	}
}

// closedBecause waits for the "connection closed" line of clientID and
// returns its cause.
func closedBecause(t *testing.T, kp hostileKproxy, clientID string) string {
	t.Helper()
	l := kp.WaitLog("the close of "+clientID, func(l testkit.LogLine) bool {
		return l.Message() == "connection closed" && l["client_id"] == clientID
	})
	cause, _ := l["cause"].(string)
	return cause
}

// describe says what a SaslAuthenticate answer holds, for failures.
func describe(resp *kmsg.SASLAuthenticateResponse) string {
	if resp == nil {
		return "no answer"
	}
	return fmt.Sprintf("error code %d with a message of %d bytes", resp.ErrorCode, len(resp.SASLAuthBytes))
}

// waitHandshaking waits up to 30 seconds for kproxy_connections_handshaking
// to be want.
func waitHandshaking(t *testing.T, kp hostileKproxy, want float64) {
	t.Helper()
	var got float64
	if !testkit.WaitFor(30*time.Second, func() bool {
		got = testkit.ScrapeMetric(t, kp.Admin, "kproxy_connections_handshaking")
		return got == want
	}) {
		t.Fatalf("kproxy_connections_handshaking = %v within 30s, want %v", got, want)
	}
}
