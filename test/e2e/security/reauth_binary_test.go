package e2esecurity

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/testkit"
)

// sessionLifetime is listeners.sasl.session_lifetime in the KIP-368 test:
// long enough for a loaded machine's round trips to fit well inside it.
const sessionLifetime = 3 * time.Second

// plainV0 logs in with a v0 SaslHandshake and a raw PLAIN token, the way
// clients without SaslAuthenticate do: they cannot be told a lifetime.
func plainV0(c *rawConn, user, password string) error {
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(0)
	hs.Mechanism = auth.Plain
	resp, err := c.RoundTrip(hs)
	if err != nil {
		return err
	}
	if code := resp.(*kmsg.SASLHandshakeResponse).ErrorCode; code != 0 {
		return fmt.Errorf("v0 handshake: error %d", code)
	}
	token := []byte("\x00" + user + "\x00" + password)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(token))), token...)); err != nil {
		return err
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return fmt.Errorf("raw PLAIN answer: %w", err)
	}
	if n := binary.BigEndian.Uint32(size[:]); n != 0 {
		return fmt.Errorf("raw PLAIN answer of %d bytes, want an empty token", n)
	}
	return nil
}

// plainFramed logs in (or re-authenticates) with a v1 SaslHandshake and
// SaslAuthenticate at authVersion, and returns the lifetime it is told.
func plainFramed(c *rawConn, user, password string, authVersion int16) (time.Duration, error) {
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = auth.Plain
	resp, err := c.RoundTrip(hs)
	if err != nil {
		return 0, err
	}
	if code := resp.(*kmsg.SASLHandshakeResponse).ErrorCode; code != 0 {
		return 0, fmt.Errorf("v1 handshake: error %d", code)
	}
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.SetVersion(authVersion)
	req.SASLAuthBytes = []byte("\x00" + user + "\x00" + password)
	aresp, err := c.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	ar := aresp.(*kmsg.SASLAuthenticateResponse)
	if ar.ErrorCode != 0 {
		return 0, fmt.Errorf("SaslAuthenticate v%d: error %d", authVersion, ar.ErrorCode)
	}
	return time.Duration(ar.SessionLifetimeMillis) * time.Millisecond, nil
}

// metadata round-trips a v4 Metadata request on c.
func metadata(c *rawConn) error {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(4)
	_, err := c.RoundTrip(req)
	return err
}

// sleepUntil sleeps until t.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }

// connectsHook counts the broker connections a kgo client opens.
type connectsHook struct{ n atomic.Int64 }

func (h *connectsHook) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err == nil {
		h.n.Add(1)
	}
}

// TestSessionLifetimeEveryClientVersion runs the real kproxy binary with a
// KIP-368 session lifetime and shows that it holds for every client
// version, as Kafka's does (SaslServerAuthenticator computes the lifetime
// for framed and unframed logins; SocketServer closes an expired
// connection at any request but a SaslHandshake that re-authenticates):
//   - a v0 client (raw tokens, told nothing) is closed at its first
//     request after the lifetime;
//   - a v1 client that re-authenticates keeps working past the first end,
//     and once its session ends, even ApiVersions closes it;
//   - a client that logs in with v1 and re-authenticates with
//     SaslAuthenticate v0 still expires;
//   - franz-go, which re-authenticates in place, produces throughout two
//     lifetimes without a new connection.
func TestSessionLifetimeEveryClientVersion(t *testing.T) {
	bin := testkit.KproxyBinary(t)
	cred256, err := auth.HashPassword(auth.ScramSHA256, "alice-secret", 4096)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := testkit.WriteConfig(t, fmt.Sprintf(`
upstream: {embedded: {brokers: 1, topics: [t], default_partitions: 1}}
listeners:
  bind_host: 127.0.0.1
  bootstrap_port: 0
  broker_port_base: 0
  sasl:
    mode: terminate
    mechanisms: [PLAIN, SCRAM-SHA-256]
    session_lifetime: %s
    users: [{name: alice, credentials: [%q]}]
admin: {listen: "127.0.0.1:0"}
log: {level: info, format: json}
`, sessionLifetime, cred256))
	kp := testkit.RunBinary(t, bin, cfgPath)
	kp.WaitReady()

	// franz-go first, in the background: it must keep producing through
	// two lifetimes on the connections it has.
	hook := &connectsHook{}
	cl := newClient(t, kgo.SeedBrokers(kp.Bootstrap), kgo.DefaultProduceTopic("t"), kgo.WithHooks(hook),
		kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism()), kgo.RecordRetries(0))
	ctx := testkit.Context(t, 60*time.Second)
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("warm-up")}).FirstErr(); err != nil {
		t.Fatalf("franz-go warm-up produce: %v", err)
	}
	connects := hook.n.Load()
	franzDone := make(chan error, 1)
	go func() {
		for end := time.Now().Add(2*sessionLifetime + time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("through re-authentication")}).FirstErr(); err != nil {
				franzDone <- fmt.Errorf("franz-go produce: %w", err)
				return
			}
		}
		franzDone <- nil
	}()

	v0 := dialRaw(t, kp.Bootstrap)
	if err := plainV0(v0, "alice", "alice-secret"); err != nil {
		t.Fatalf("v0 login: %v", err)
	}
	v0End := time.Now().Add(sessionLifetime)

	reauth, v1ThenV0 := dialRaw(t, kp.Bootstrap), dialRaw(t, kp.Bootstrap)
	for _, c := range []*rawConn{reauth, v1ThenV0} {
		lifetime, err := plainFramed(c, "alice", "alice-secret", 1)
		if err != nil || lifetime != sessionLifetime {
			t.Fatalf("v1 login: lifetime %s, %v; want %s", lifetime, err, sessionLifetime)
		}
	}
	firstEnd := time.Now().Add(sessionLifetime)
	for name, c := range map[string]*rawConn{"v0": v0, "v1": reauth, "v1-then-v0": v1ThenV0} {
		if err := metadata(c); err != nil {
			t.Fatalf("%s client, Metadata right after login: %v", name, err)
		}
	}

	// Halfway, two clients re-authenticate: one told the lifetime (v1),
	// one not (SaslAuthenticate v0 after a v1 handshake).
	sleepUntil(firstEnd.Add(-sessionLifetime / 2))
	reauthStart := time.Now()
	if lifetime, err := plainFramed(reauth, "alice", "alice-secret", 1); err != nil || lifetime != sessionLifetime {
		t.Fatalf("v1 re-authentication: lifetime %s, %v", lifetime, err)
	}
	if lifetime, err := plainFramed(v1ThenV0, "alice", "alice-secret", 0); err != nil || lifetime != 0 {
		t.Fatalf("v0 re-authentication: lifetime %s, %v (v0 has no field for it)", lifetime, err)
	}
	secondEnd := time.Now().Add(sessionLifetime)

	// Past the first end (and still before the second).
	sleepUntil(firstEnd.Add(500 * time.Millisecond))
	if !time.Now().Before(reauthStart.Add(sessionLifetime)) {
		t.Fatal("machine too slow: the re-authenticated sessions already ended")
	}
	if err := metadata(reauth); err != nil {
		t.Errorf("v1 client after re-authenticating, past the first end: %v", err)
	}
	if err := metadata(v1ThenV0); err != nil {
		t.Errorf("v0 re-authenticated client, past the first end: %v", err)
	}
	sleepUntil(v0End.Add(500 * time.Millisecond))
	if err := metadata(v0); err == nil {
		t.Error("v0 client: Metadata answered after its session lifetime; want the connection closed")
	}

	// Past the second end: nothing but a re-authentication, not even
	// ApiVersions, and no client version escapes.
	sleepUntil(secondEnd.Add(500 * time.Millisecond))
	if _, err := reauth.APIVersions(); err == nil {
		t.Error("v1 client: ApiVersions answered after its session ended; want the connection closed")
	}
	if err := metadata(v1ThenV0); err == nil {
		t.Error("client re-authenticated with SaslAuthenticate v0: Metadata answered after its session ended; want the connection closed")
	}
	kp.WaitLog("expiry close", func(l testkit.LogLine) bool {
		s, _ := l["cause"].(string)
		return strings.Contains(s, "SASL session expired")
	})

	if err := <-franzDone; err != nil {
		t.Fatal(err)
	}
	if n := hook.n.Load(); n != connects {
		t.Errorf("franz-go opened %d new connections over two session lifetimes; want 0 (re-authentication in place)", n-connects)
	}
}
