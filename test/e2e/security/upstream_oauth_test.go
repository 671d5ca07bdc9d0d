package e2esecurity

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/idp"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// oauthTokenLifetime is the test identity provider's token lifetime: the
// upstream caps each OAUTHBEARER session at the token's remaining
// lifetime, so a few seconds span several sessions and tokens.
const oauthTokenLifetime = 5 * time.Second

// oauthUpstream starts the test identity provider (opts, with kproxy as
// its client, secret in KPROXY_TEST_OAUTH_SECRET), kfake holding topic, and
// the upstream kproxy's OAUTHBEARER login meets: a second kproxy in front
// of kfake validating tokens against the provider's JWKS (fetched trusting
// jwksCAFile, when set).
func oauthUpstream(t *testing.T, topic string, opts idp.Options, jwksCAFile string) (*idp.IdP, *kproxytest.Kproxy) {
	t.Helper()
	opts.Audience, opts.Clients = "kafka", map[string]idp.Client{"kproxy": {Secret: "kproxy-oauth-secret"}}
	provider := idp.StartTest(t, opts)
	t.Setenv("KPROXY_TEST_OAUTH_SECRET", "kproxy-oauth-secret")
	var caKey []string
	if jwksCAFile != "" {
		caKey = append(caKey, fmt.Sprintf("jwks_ca_file: %q", jwksCAFile))
	}
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, topic))
	upstream := kproxytest.Start(t, testkit.Config{Upstream: cluster.ListenAddrs(),
		ListenerKeys: testkit.TerminateOAuthBearer(provider.JWKSURL(), provider.Issuer(), caKey...)}.YAML())
	return provider, upstream
}

// oauthLoginConfig is the configuration of a kproxy in front of upstream
// logging in to it with OAUTHBEARER, its token from provider for the
// client kproxy; keys are further keys of upstream.sasl, in flow style.
func oauthLoginConfig(upstream *kproxytest.Kproxy, provider *idp.IdP, keys ...string) string {
	sasl := fmt.Sprintf("sasl: {mechanism: OAUTHBEARER, token_endpoint: %q, client_id: kproxy, client_secret_env: KPROXY_TEST_OAUTH_SECRET", provider.TokenURL())
	for _, k := range keys {
		sasl += ", " + k
	}
	return testkit.Config{Upstream: []string{upstream.BootstrapAddr()}, UpstreamKeys: sasl + "}"}.YAML()
}

// TestUpstreamOAuthReauthenticatesWithFreshTokens: kproxy logs in to its
// upstream with OAUTHBEARER, holding a token of its own from the test
// identity provider (client-credentials grant). The upstream (kfake has no
// OAUTHBEARER) is a second kproxy that validates the token against the
// provider's JWKS and ends each session when its token expires (KIP-368),
// closing a connection whose session is over, as a broker does. A producer
// and a consumer through kproxy run for several token lifetimes: kproxy
// re-authenticates its upstream connections in place, each time with a
// token that has not expired (refreshed before expiry), so no connection
// closes on either side and no record is lost; the provider sees about one
// token request per lifetime, not one per connection or login.
// (Real Kafka: conformance scenario upstream-oauth.)
func TestUpstreamOAuthReauthenticatesWithFreshTokens(t *testing.T) {
	const topic = "oauth-reauth"
	provider, upstream := oauthUpstream(t, topic, idp.Options{TokenLifetime: oauthTokenLifetime}, "")
	px := kproxytest.Start(t, oauthLoginConfig(upstream, provider, "scope: kafka"))

	producer := newClient(t, kgo.SeedBrokers(px.BootstrapAddr()), kgo.DefaultProduceTopic(topic), kgo.RequestRetries(0))
	consumer := newClient(t, kgo.SeedBrokers(px.BootstrapAddr()), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond), kgo.RequestRetries(0))
	ctx := testkit.Context(t, 60*time.Second)
	got := 0
	roundTrip := func(i int) {
		t.Helper()
		if err := producer.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "r%04d", i)}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
		consumeInOrder(t, ctx, consumer, &got, i+1)
	}
	roundTrip(0) // every connection either client uses is open now
	metric := func(p *kproxytest.Kproxy, name string, labels ...string) float64 {
		return testkit.MetricValue(t, p.Registry, name, labels...)
	}
	connections := metric(px, "kproxy_connections_total")
	closedBefore := metric(px, "kproxy_connections_closed_total")
	upstreamClosedBefore := metric(upstream, "kproxy_connections_closed_total")
	upstreamConnections := metric(upstream, "kproxy_connections_active")
	reauthsBefore := metric(px, "kproxy_upstream_reauthentications_total", "result", "success")
	tokensBefore := provider.TokensIssued()

	const span = 2 * oauthTokenLifetime
	n := 1
	for start := time.Now(); time.Since(start) < span; n++ {
		roundTrip(n)
		time.Sleep(20 * time.Millisecond)
	}
	// Idle across a token's end too: kproxy re-authenticates without a
	// client request to wake it.
	time.Sleep(oauthTokenLifetime + oauthTokenLifetime/2)
	roundTrip(n)

	if closed := metric(px, "kproxy_connections_closed_total") - closedBefore; closed != 0 {
		t.Errorf("kproxy closed %v connections", closed)
	}
	if now := metric(px, "kproxy_connections_total"); now != connections {
		t.Errorf("clients opened %v new connections to kproxy", now-connections)
	}
	if closed := metric(upstream, "kproxy_connections_closed_total") - upstreamClosedBefore; closed != 0 {
		t.Errorf("the upstream closed %v of kproxy's connections (a session outlived its token?)", closed)
	}
	if now := metric(upstream, "kproxy_connections_active"); now != upstreamConnections {
		t.Errorf("kproxy's upstream connections went from %v to %v", upstreamConnections, now)
	}
	reauths := metric(px, "kproxy_upstream_reauthentications_total", "result", "success") - reauthsBefore
	if reauths < 3*upstreamConnections {
		t.Errorf("%v upstream re-authentications on %v connections over %s: sessions were not renewed", reauths, upstreamConnections, span+oauthTokenLifetime)
	}
	if failed := metric(px, "kproxy_upstream_reauthentications_total", "result", "failure"); failed != 0 {
		t.Errorf("%v upstream re-authentications failed", failed)
	}
	// About one token per half lifetime (kproxy refreshes a token this
	// short at half its life), however many connections re-authenticate.
	tokens := provider.TokensIssued() - tokensBefore
	if maxTokens := int((span+2*oauthTokenLifetime)/(oauthTokenLifetime/2)) + 1; tokens < 3 || tokens > maxTokens {
		t.Errorf("the provider issued %d tokens over %s for %v connections, want 3..%d", tokens, span+oauthTokenLifetime, upstreamConnections, maxTokens)
	}
	if requests := metric(px, "kproxy_upstream_oauth_token_requests_total", "result", "success"); requests != float64(provider.TokensIssued()) {
		t.Errorf("kproxy counted %v token requests, the provider issued %d", requests, provider.TokensIssued())
	}
	if expiry := metric(px, "kproxy_upstream_oauth_token_expiry_timestamp_seconds"); time.Unix(int64(expiry), 0).Before(time.Now().Add(-time.Second)) {
		t.Errorf("token expiry gauge %v is in the past", expiry)
	}
	t.Logf("%d records, %v re-authentications on %v upstream connections, %d tokens", n+1, reauths, upstreamConnections, tokens)
}

// TestUpstreamOAuthTokenEndpointCAFile: the identity provider serves HTTPS
// with a certificate of a private CA. With token_endpoint_ca_file naming
// that CA, kproxy gets its token and logs in upstream (a second kproxy
// validating the token against the provider's JWKS, fetched with
// jwks_ca_file), so a client produces through it; without it, kproxy's
// token request fails on the certificate, the provider issues nothing, the
// client's produce fails and kproxy's log names the certificate problem.
func TestUpstreamOAuthTokenEndpointCAFile(t *testing.T) {
	const topic = "oauth-ca"
	pki := certs.New(t)
	provider, upstream := oauthUpstream(t, topic, idp.Options{TLSCA: pki.CA}, pki.CAFile)

	ctx := testkit.Context(t, 30*time.Second)
	trusted := kproxytest.Start(t, oauthLoginConfig(upstream, provider, fmt.Sprintf("token_endpoint_ca_file: %q", pki.CAFile)))
	producer := newClient(t, kgo.SeedBrokers(trusted.BootstrapAddr()), kgo.DefaultProduceTopic(topic), kgo.RequestRetries(0))
	if err := producer.ProduceSync(ctx, &kgo.Record{Value: []byte("r0")}).FirstErr(); err != nil {
		t.Fatalf("produce through kproxy trusting the provider's CA: %v", err)
	}
	if n := provider.TokensIssued(); n != 1 {
		t.Fatalf("the provider issued %d tokens, want 1", n)
	}

	// Without the CA kproxy's own start-up discovery cannot log in either,
	// so it never becomes ready; its bootstrap listener is open all the
	// same.
	log := &logbuf.Buffer{}
	roots := kproxytest.Start(t, oauthLoginConfig(upstream, provider), kproxytest.WithLog(log, zerolog.WarnLevel), kproxytest.Unready())
	refused := newClient(t, kgo.SeedBrokers(roots.BootstrapAddr()), kgo.DefaultProduceTopic(topic),
		kgo.RequestRetries(0), kgo.RecordRetries(1), kgo.RecordDeliveryTimeout(5*time.Second))
	if err := refused.ProduceSync(ctx, &kgo.Record{Value: []byte("r1")}).FirstErr(); err == nil {
		t.Fatal("produce through kproxy with the system roots succeeded")
	}
	if n := provider.TokensIssued(); n != 1 {
		t.Fatalf("the provider issued %d tokens, want still 1", n)
	}
	if roots.Ready() {
		t.Error("kproxy with the system roots became ready")
	}
	if got := log.String(); !strings.Contains(got, "upstream OAuth token request failed") || !strings.Contains(got, "x509: certificate signed by unknown authority") ||
		strings.Contains(got, "kproxy-oauth-secret") {
		t.Fatalf("kproxy's log should name the certificate problem, not the secret:\n%s", got)
	}
	if n := testkit.MetricValue(t, roots.Registry, "kproxy_upstream_oauth_token_requests_total", "result", "failure"); n < 1 {
		t.Errorf("kproxy_upstream_oauth_token_requests_total{result=failure} = %v, want at least 1", n)
	}
}
