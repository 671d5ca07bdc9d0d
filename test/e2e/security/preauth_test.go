package e2esecurity

import (
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// countingListener counts the TCP connections kfake accepts: every
// connection anything makes to the upstream, kproxy's included.
type countingListener struct {
	net.Listener
	accepted *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// countedUpstream is secureUpstream whose brokers count the connections
// they accept in accepted.
func countedUpstream(t *testing.T, p certs.Files, accepted *atomic.Int64) *kfake.Cluster {
	t.Helper()
	return secureUpstream(t, p, kfake.ListenFn(func(network, addr string) (net.Listener, error) {
		ln, err := net.Listen(network, addr)
		if err != nil {
			return nil, err
		}
		return countingListener{Listener: ln, accepted: accepted}, nil
	}))
}

// settled waits until n has not changed for quiet and returns it.
func settled(t *testing.T, n *atomic.Int64, quiet time.Duration) int64 {
	t.Helper()
	last, since := n.Load(), time.Now()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cur := n.Load(); cur != last {
			last, since = cur, time.Now()
		} else if time.Since(since) >= quiet {
			return cur
		}
	}
	t.Fatalf("upstream connections still being made (%d)", last)
	return 0
}

// unauthenticatedSession is what a client without valid credentials does
// on one connection: ApiVersions (at version; before it, one too new for
// kproxy, answered in the v0 layout as KIP-511 says, and one with a
// malformed software name), SaslHandshake, and a SaslAuthenticate with a
// wrong password. It returns the ApiVersions
// answer.
func unauthenticatedSession(t *testing.T, p certs.Files, addr string, version int16) (*kmsg.ApiVersionsResponse, error) {
	c, err := dialRawTLS(t, addr, clientTLS(t, p, false))
	if err != nil {
		return nil, err
	}
	defer c.Close()

	tooNew := kmsg.NewPtrApiVersionsRequest()
	tooNew.SetVersion(protocol.MaxVersion(wire.APIVersionsKey) + 1)
	corr, err := c.Send(tooNew)
	if err != nil {
		return nil, err
	}
	v0 := kmsg.NewPtrApiVersionsRequest()
	v0.SetVersion(0)
	if _, resp, err := c.Receive(v0, corr); err != nil {
		return nil, fmt.Errorf("ApiVersions v%d: %w", tooNew.Version, err)
	} else if code := resp.(*kmsg.ApiVersionsResponse).ErrorCode; code != wire.ErrCodeUnsupportedVersion {
		return nil, fmt.Errorf("ApiVersions v%d: error code %d, want %d", tooNew.Version, code, wire.ErrCodeUnsupportedVersion)
	}

	// As a broker does (KIP-511), a malformed client software name gets
	// INVALID_REQUEST, and the client may try again.
	bad := kmsg.NewPtrApiVersionsRequest()
	bad.SetVersion(3)
	bad.ClientSoftwareName, bad.ClientSoftwareVersion = "not valid!", "1"
	if resp, err := c.RoundTrip(bad); err != nil {
		return nil, fmt.Errorf("ApiVersions with a malformed software name: %w", err)
	} else if code := resp.(*kmsg.ApiVersionsResponse).ErrorCode; code != wire.ErrCodeInvalidRequest {
		return nil, fmt.Errorf("ApiVersions with a malformed software name: error code %d, want %d", code, wire.ErrCodeInvalidRequest)
	}

	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(version)
	av.ClientSoftwareName, av.ClientSoftwareVersion = "e2esecurity", "1.0-rc.1"
	resp, err := c.RoundTrip(av)
	if err != nil {
		return nil, fmt.Errorf("ApiVersions v%d: %w", version, err)
	}
	versions := resp.(*kmsg.ApiVersionsResponse)
	if versions.ErrorCode != 0 || versions.Version != version {
		return nil, fmt.Errorf("ApiVersions v%d: error code %d, version %d", version, versions.ErrorCode, versions.Version)
	}

	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = "PLAIN"
	if resp, err := c.RoundTrip(hs); err != nil {
		return nil, fmt.Errorf("SaslHandshake: %w", err)
	} else if code := resp.(*kmsg.SASLHandshakeResponse).ErrorCode; code != 0 {
		return nil, fmt.Errorf("SaslHandshake: error code %d", code)
	}
	sa := kmsg.NewPtrSASLAuthenticateRequest()
	sa.SetVersion(1)
	sa.SASLAuthBytes = []byte("\x00alice\x00not-alices-password")
	resp, err = c.RoundTrip(sa)
	if err != nil {
		return nil, fmt.Errorf("SaslAuthenticate: %w", err)
	}
	if code := resp.(*kmsg.SASLAuthenticateResponse).ErrorCode; code != wire.ErrCodeSASLAuthenticationFailed {
		return nil, fmt.Errorf("SaslAuthenticate with a wrong password: error code %d", code)
	}
	if _, err := testkit.WaitClosed(c, 5*time.Second); err != nil {
		return nil, fmt.Errorf("after a failed login: %w", err)
	}
	return versions, nil
}

// TestUnauthenticatedClientsNeverReachUpstream: in
// SASL terminate mode, clients that send ApiVersions, SaslHandshake and a
// wrong password, many times and at once, on the bootstrap and every
// broker listener, cause no upstream connection at all once kproxy knows
// each node's answer (which costs it at most one connection per node):
// kproxy answers them from what it learnt of each node. Their ApiVersions answer is the
// upstream's as an authenticated client sees it relayed. A good client
// (franz-go with SCRAM) still produces and consumes, and its connections
// reach the upstream.
func TestUnauthenticatedClientsNeverReachUpstream(t *testing.T) {
	p := certs.New(t)
	var accepted atomic.Int64
	cluster := countedUpstream(t, p, &accepted)
	px := kproxytest.Start(t, proxyYAML(t, p, cluster.ListenAddrs(), "none", "terminate"))
	addrs := []string{px.BootstrapAddr()}
	for node := range int32(3) {
		addr, ok := px.BrokerAddr(node)
		if !ok {
			t.Fatalf("no listener for node %d", node)
		}
		addrs = append(addrs, addr)
	}
	// kproxy's own connections: discovery, and filling each node's answer
	// (at start-up, or for the first client that needs it: at most one per
	// node). Once every listener has answered one unauthenticated client,
	// each node's answer is cached.
	started := settled(t, &accepted, 500*time.Millisecond)
	for _, addr := range addrs {
		if _, err := unauthenticatedSession(t, p, addr, 3); err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
	}
	before := accepted.Load()
	if filled := before - started; filled > int64(len(addrs)) {
		t.Errorf("filling %d listeners' answers took %d upstream connections", len(addrs), filled)
	}

	var wg sync.WaitGroup
	answers := make([][]*kmsg.ApiVersionsResponse, len(addrs))
	var mu sync.Mutex
	errs := make(chan error, 200)
	for round := range 10 {
		for i, addr := range addrs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				version := []int16{0, 1, 2, 3, protocol.MaxVersion(wire.APIVersionsKey)}[round%5]
				resp, err := unauthenticatedSession(t, p, addr, version)
				if err != nil {
					errs <- fmt.Errorf("%s round %d: %w", addr, round, err)
					return
				}
				mu.Lock()
				answers[i] = append(answers[i], resp)
				mu.Unlock()
			}()
		}
		if round%2 == 0 {
			wg.Wait() // half the rounds one after another, half at once
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if after := accepted.Load(); after != before {
		t.Errorf("unauthenticated clients caused %d upstream connections", after-before)
	}

	// The answer matches what the upstream says to an authenticated client
	// (relayed, through the same filters), listener by listener.
	for i, addr := range addrs {
		relayed := authenticatedAPIVersions(t, p, addr)
		for _, local := range answers[i] {
			if !slices.EqualFunc(local.ApiKeys, relayed.ApiKeys, sameVersions) {
				t.Errorf("%s: answered before authentication with %v, relayed after it %v", addr, local.ApiKeys, relayed.ApiKeys)
				break
			}
		}
	}

	alice := scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()
	if err := roundTrip(t, kgo.SeedBrokers(px.BootstrapAddr()), kgo.DialTLSConfig(clientTLS(t, p, false)), kgo.SASL(alice)); err != nil {
		t.Fatal(err)
	}
	if accepted.Load() == before {
		t.Error("a good client's connections did not reach the upstream: the count is not counting")
	}
}

// authenticatedAPIVersions logs in as alice with PLAIN on a new
// connection to addr and returns the relayed answer to ApiVersions v3.
func authenticatedAPIVersions(t *testing.T, p certs.Files, addr string) *kmsg.ApiVersionsResponse {
	t.Helper()
	c, err := dialRawTLS(t, addr, clientTLS(t, p, false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	loginAlice(t, c)
	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(3)
	av.ClientSoftwareName, av.ClientSoftwareVersion = "e2esecurity", "1"
	resp, err := c.RoundTrip(av)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(*kmsg.ApiVersionsResponse)
}

// loginAlice authenticates c as alice with SASL PLAIN (v1 handshake).
func loginAlice(t *testing.T, c *rawConn) {
	t.Helper()
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = "PLAIN"
	if _, err := c.RoundTrip(hs); err != nil {
		t.Fatal(err)
	}
	sa := kmsg.NewPtrSASLAuthenticateRequest()
	sa.SetVersion(1)
	sa.SASLAuthBytes = []byte("\x00alice\x00alice-secret")
	if resp, err := c.RoundTrip(sa); err != nil || resp.(*kmsg.SASLAuthenticateResponse).ErrorCode != 0 {
		t.Fatalf("login: %v %+v", err, resp)
	}
}

func sameVersions(a, b kmsg.ApiVersionsResponseApiKey) bool {
	return a.ApiKey == b.ApiKey && a.MinVersion == b.MinVersion && a.MaxVersion == b.MaxVersion
}
