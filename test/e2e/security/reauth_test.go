package e2esecurity

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// upstreamLifetime is the upstream's SASL session lifetime in the
// re-authentication tests: short, so that a few seconds span several.
const upstreamLifetime = 2 * time.Second

// TestUpstreamReauthenticatesInPlace: kproxy logs in
// upstream with its own credentials and the upstream gives the session a
// lifetime (KIP-368). A producer and a consumer through kproxy, running
// for several lifetimes, keep their connections: kproxy re-authenticates
// on the same upstream connection between their requests, no record is
// lost or repeated, and no connection is closed or replaced on either
// side. The upstream is a second kproxy terminating SASL with a
// session_lifetime (which closes a connection whose session is over at
// its next request, as a broker does) in front of kfake, and kfake itself
// with connections.max.reauth.ms (which accepts re-authentication but does
// not enforce the lifetime); and the first again with clients that log in
// to kproxy with SCRAM.
func TestUpstreamReauthenticatesInPlace(t *testing.T) {
	for _, tc := range []struct {
		upstream   string
		clientSASL bool // clients log in to kproxy too (SASL terminate)
	}{{"kproxy", false}, {"kfake", false}, {"kproxy", true}} {
		upstream := tc.upstream
		name := upstream
		if tc.clientSASL {
			name += "/client-sasl"
		}
		t.Run(name, func(t *testing.T) {
			const topic = "reauth"
			var bootstrap string
			var upstreamProxy *kproxytest.Kproxy
			switch upstream {
			case "kproxy":
				cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, topic))
				cred, err := auth.HashPassword(auth.ScramSHA256, "upstream-secret", auth.MinIterations)
				if err != nil {
					t.Fatal(err)
				}
				upstreamProxy = kproxytest.Start(t, fmt.Sprintf(`
upstream: {bootstrap_servers: [%q]}
listeners:
  bind_host: 127.0.0.1
  sasl:
    mode: terminate
    mechanisms: [SCRAM-SHA-256]
    session_lifetime: %s
    users: [{name: kproxy-svc, credentials: [%q]}]
log: {level: warn}
`, cluster.ListenAddrs()[0], upstreamLifetime, cred))
				bootstrap = upstreamProxy.BootstrapAddr()
			case "kfake":
				cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, topic), kfake.EnableSASL(),
					kfake.Superuser("SCRAM-SHA-256", "kproxy-svc", "upstream-secret"),
					kfake.BrokerConfigs(map[string]string{"connections.max.reauth.ms": fmt.Sprint(upstreamLifetime.Milliseconds())}))
				bootstrap = cluster.ListenAddrs()[0]
			}
			listeners := "{bind_host: 127.0.0.1}"
			clientOpts := []kgo.Opt{kgo.SeedBrokers("")}
			if tc.clientSASL {
				cred, err := auth.HashPassword(auth.ScramSHA512, "alice-secret", auth.MinIterations)
				if err != nil {
					t.Fatal(err)
				}
				listeners = fmt.Sprintf(`
  bind_host: 127.0.0.1
  sasl: {mode: terminate, mechanisms: [SCRAM-SHA-512], users: [{name: alice, credentials: [%q]}]}`, cred)
				clientOpts = append(clientOpts, kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()))
			}
			px := kproxytest.Start(t, fmt.Sprintf(`
upstream:
  bootstrap_servers: [%q]
  sasl: {mechanism: SCRAM-SHA-256, username: kproxy-svc, password: upstream-secret}
listeners: %s
log: {level: warn}
`, bootstrap, listeners))
			clientOpts[0] = kgo.SeedBrokers(px.BootstrapAddr())

			// The checks below count connections: kgo must not close its
			// idle seed connection (after 20 s by default) on a slow run.
			keepIdle := kgo.ConnIdleTimeout(time.Minute)
			producer := newClient(t, append(clientOpts, kgo.DefaultProduceTopic(topic), kgo.RequestRetries(0), keepIdle)...)
			consumer := newClient(t, append(clientOpts, kgo.ConsumeTopics(topic),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond), kgo.RequestRetries(0), keepIdle)...)
			ctx := testkit.Context(t, 60*time.Second)

			// Warm up: every connection either client will use is open.
			produce := func(i int) {
				t.Helper()
				if err := producer.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "r%04d", i)}).FirstErr(); err != nil {
					t.Fatalf("produce %d: %v", i, err)
				}
			}
			got := 0
			consume := func(upTo int) {
				t.Helper()
				consumeInOrder(t, ctx, consumer, &got, upTo)
			}
			produce(0)
			consume(1)
			connections := testkit.MetricValue(t, px.Registry, "kproxy_connections_total")
			closedBefore := testkit.MetricValue(t, px.Registry, "kproxy_connections_closed_total")
			var upstreamConnections, upstreamClosedBefore, handshakesBefore float64
			if upstreamProxy != nil {
				upstreamConnections = testkit.MetricValue(t, upstreamProxy.Registry, "kproxy_connections_active")
				upstreamClosedBefore = testkit.MetricValue(t, upstreamProxy.Registry, "kproxy_connections_closed_total")
				handshakesBefore = testkit.MetricValue(t, upstreamProxy.Registry, "kproxy_requests_total", "api", "SASLHandshake")
			}

			n := 1
			for start := time.Now(); time.Since(start) < 3*upstreamLifetime+upstreamLifetime/2; n++ {
				produce(n)
				consume(n + 1)
				time.Sleep(20 * time.Millisecond)
			}
			// Idle for longer than a lifetime: kproxy re-authenticates
			// without a client request to wake it.
			time.Sleep(upstreamLifetime + upstreamLifetime/2)
			produce(n)
			consume(n + 1)

			if closed := testkit.MetricValue(t, px.Registry, "kproxy_connections_closed_total") - closedBefore; closed != 0 {
				t.Errorf("kproxy closed %v connections during %s (upstream lifetime %s)", closed, 5*upstreamLifetime, upstreamLifetime)
			}
			if now := testkit.MetricValue(t, px.Registry, "kproxy_connections_total"); now != connections {
				t.Errorf("clients opened %v new connections to kproxy", now-connections)
			}
			if upstreamProxy != nil {
				if closed := testkit.MetricValue(t, upstreamProxy.Registry, "kproxy_connections_closed_total") - upstreamClosedBefore; closed != 0 {
					t.Errorf("the upstream closed %v of kproxy's connections", closed)
				}
				if now := testkit.MetricValue(t, upstreamProxy.Registry, "kproxy_connections_active"); now != upstreamConnections {
					t.Errorf("kproxy's upstream connections went from %v to %v", upstreamConnections, now)
				}
				// Every upstream connection of kproxy's re-authenticated
				// about once per lifetime.
				handshakes := testkit.MetricValue(t, upstreamProxy.Registry, "kproxy_requests_total", "api", "SASLHandshake") - handshakesBefore
				if handshakes < 3*upstreamConnections {
					t.Errorf("%v SaslHandshakes on %v upstream connections over %s: not re-authenticated", handshakes, upstreamConnections, 5*upstreamLifetime)
				}
			}
			t.Logf("%d records over %s", n+1, 5*upstreamLifetime)
		})
	}
}
