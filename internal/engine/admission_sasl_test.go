package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/testkit"
)

// A SASL client is in its handshake until it has authenticated: it counts
// against limits.max_handshakes until then, and no longer once logged in,
// while it stays open.
func TestSASLClientHandshakesUntilAuthenticated(t *testing.T) {
	cred, err := auth.HashPassword(auth.ScramSHA256, "alice-secret", auth.MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	px := testkit.StartEngine(t, testkit.Engine{YAML: fmt.Sprintf(`
upstream: {bootstrap_servers: ["%s"], dial_timeout: 5s}
listeners:
  bind_host: 127.0.0.1
  bootstrap_port: 0
  broker_port_base: 0
  sasl: {mode: terminate, mechanisms: [PLAIN], users: [{name: alice, credentials: [%q]}]}
limits: {handshake_timeout: 5m}
log: {level: warn}
`, testkit.Cluster(t, 1).ListenAddrs()[0], cred)})
	handshaking := func() float64 { return testkit.MetricValue(t, px.Registry, "kproxy_connections_handshaking") }
	waitValue := func(what string, want float64) {
		t.Helper()
		if !testkit.WaitFor(20*time.Second, func() bool { return handshaking() == want }) {
			t.Fatalf("%s: kproxy_connections_handshaking = %v within 20s, want %v", what, handshaking(), want)
		}
	}
	c := testkit.DialRaw(t, px.BootstrapAddr(), "sasl-handshaking")
	c.MustRoundTrip(t, kmsg.NewPtrApiVersionsRequest()) // answered before login
	waitValue("connected, not logged in", 1)

	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, auth.Plain
	if r := c.MustRoundTrip(t, hs).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
		t.Fatalf("SaslHandshake: error %d", r.ErrorCode)
	}
	waitValue("mechanism chosen, not logged in", 1)
	a := kmsg.NewPtrSASLAuthenticateRequest()
	a.Version = 1
	a.SASLAuthBytes = []byte("\x00alice\x00alice-secret")
	if r := c.MustRoundTrip(t, a).(*kmsg.SASLAuthenticateResponse); r.ErrorCode != 0 {
		t.Fatalf("SaslAuthenticate: error %d", r.ErrorCode)
	}
	waitValue("logged in", 0)
	if v := testkit.MetricValue(t, px.Registry, "kproxy_connections_active"); v != 1 {
		t.Errorf("kproxy_connections_active = %v, want 1 (the logged-in client)", v)
	}
}
