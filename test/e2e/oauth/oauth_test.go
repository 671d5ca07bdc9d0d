package e2eoauth

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/idp"
)

// TestProduceConsumeByPrincipalAndClaim: clients holding provider-issued
// tokens produce and consume through kproxy; the policy decides by the
// token's groups claim (payments-app), by its principal (reporting may read
// events but not write payments), and denies a valid token whose principal
// it grants nothing (mallory), naming User:mallory in the audit log.
func TestProduceConsumeByPrincipalAndClaim(t *testing.T) {
	e := newEnv(t, time.Hour, "")
	ctx := testkit.Context(t, 30*time.Second)

	payments := e.client(tokenLogin(e.idp, "payments-app", nil), kgo.DefaultProduceTopic("payments"))
	for i := range 3 {
		if err := payments.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "p%d", i)}).FirstErr(); err != nil {
			t.Fatalf("payments-app produce %d: %v", i, err)
		}
	}
	consumer := e.client(tokenLogin(e.idp, "payments-app", nil), kgo.ConsumeTopics("payments"), kgo.ConsumerGroup("payments-audit"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	var got []string
	for len(got) < 3 {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("payments-app consume after %d: %v", len(got), err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if strings.Join(got, ",") != "p0,p1,p2" {
		t.Fatalf("consumed %v", got)
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("payments-app commit: %v", err)
	}

	direct, err := kgo.NewClient(kgo.SeedBrokers(e.cluster.ListenAddrs()...), kgo.DefaultProduceTopic("events"))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if err := direct.ProduceSync(ctx, &kgo.Record{Value: []byte("e0")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	reporting := e.client(tokenLogin(e.idp, "reporting", nil), kgo.ConsumeTopics("events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	fs := reporting.PollFetches(ctx)
	if err := fs.Err0(); err != nil || fs.NumRecords() != 1 {
		t.Fatalf("reporting consume events: %d records, %v", fs.NumRecords(), err)
	}
	reportingWriter := e.client(tokenLogin(e.idp, "reporting", nil), kgo.DefaultProduceTopic("payments"), kgo.DisableIdempotentWrite(), kgo.RecordRetries(1))
	if err := reportingWriter.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("reporting produce to payments: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	mallory := e.client(tokenLogin(e.idp, "mallory", nil), kgo.DefaultProduceTopic("payments"), kgo.DisableIdempotentWrite(), kgo.RecordRetries(1))
	if err := mallory.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("mallory produce: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	// Audit lines are written off the request path: wait for mallory's.
	testkit.WaitFor(5*time.Second, func() bool { return strings.Contains(e.audit.String(t), `"principal":"User:mallory"`) })
	if !strings.Contains(e.audit.String(t), `"principal":"User:mallory"`) || strings.Contains(e.audit.String(t), `"principal":"User:svc-payments"`) {
		t.Errorf("audit log should deny mallory and reporting only:\n%s", e.audit.String(t))
	}
}

// TestRejections: every kind of bad token is refused with
// SASL_AUTHENTICATION_FAILED (after the KIP-255 error challenge, which
// franz-go answers), and kproxy's log says why without the token.
func TestRejections(t *testing.T) {
	e := newEnv(t, time.Hour, "")
	now := time.Now()
	sub := func(extra map[string]any) map[string]any {
		c := map[string]any{"sub": "svc-payments"}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	cases := []struct {
		name, token, reason string
	}{
		{"expired", e.idp.Mint(sub(map[string]any{"exp": now.Add(-5 * time.Minute)})), "expired at"},
		{"not yet valid", e.idp.Mint(sub(map[string]any{"nbf": now.Add(5 * time.Minute)})), "not valid before"},
		{"wrong issuer", e.idp.Mint(sub(map[string]any{"iss": "https://elsewhere.example"})), `issuer \"https://elsewhere.example\" is not the expected`},
		{"wrong audience", e.idp.Mint(sub(map[string]any{"aud": "billing"})), `audience \"billing\" does not include the expected \"kafka\"`},
		{"bad signature", e.idp.Mint(sub(nil), idp.BadSignature()), "signature does not verify"},
		{"unknown kid after refresh", e.idp.Mint(sub(nil), idp.SignedByUnknownKey()), "unknown key id, also after refreshing"},
		{"alg none", e.idp.Mint(sub(nil), idp.AlgNone()), `signature algorithm \"none\" is not allowed`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := testkit.Context(t, 15*time.Second)
			before := len(e.log.Bytes())
			cl := e.client(kgo.SASL(oauth.Auth{Token: c.token}.AsMechanism()))
			err := cl.Ping(ctx)
			if !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Fatalf("login with a token %s: %v, want SASL_AUTHENTICATION_FAILED", c.name, err)
			}
			cl.Close()
			logged := e.waitLog(t, before, c.reason)
			if strings.Contains(logged, c.token) || strings.Contains(logged, strings.Split(c.token, ".")[1]) {
				t.Fatal("kproxy logged the token")
			}
		})
	}
	// The start-up fetch and one refresh for the unknown kid; the other
	// cases' known kid never refetched.
	if fetches := e.idp.JWKSFetches(); fetches != 2 {
		t.Errorf("%d JWKS fetches, want 2", fetches)
	}
	if n := testkit.MetricValue(t, e.proxy.Registry, "kproxy_oauth_jwks_fetches_total", "result", "success"); n != 2 {
		t.Errorf("kproxy_oauth_jwks_fetches_total{result=success} = %v, want 2", n)
	}
	if n := testkit.MetricValue(t, e.proxy.Registry, "kproxy_oauth_jwks_keys"); n != 1 {
		t.Errorf("kproxy_oauth_jwks_keys = %v, want 1", n)
	}
}

// waitLog waits for kproxy's log after offset before to contain want and
// returns that part of the log.
func (e *env) waitLog(t *testing.T, before int, want string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		logged := e.log.String()[before:]
		if strings.Contains(logged, want) {
			return logged
		}
		if time.Now().After(deadline) {
			t.Fatalf("kproxy's log does not say %q:\n%s", want, logged)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKeyRotationMidRun: tokens live 3s, so franz-go re-authenticates its
// connections to kproxy every couple of seconds (KIP-368, the session
// lifetime being the token's remaining lifetime). Mid-run the provider
// rotates its signing key and later retires the old one: the producer's
// existing connections keep re-authenticating with tokens signed by the
// new key, none is closed or replaced, no record is lost; a new client
// logs in with the new key; a token of the retired key is refused.
func TestKeyRotationMidRun(t *testing.T) {
	const lifetime = 3 * time.Second
	e := newEnv(t, lifetime, "jwks_refresh_interval: 1s")
	ctx := testkit.Context(t, 60*time.Second)
	var logins atomic.Int64
	// The checks below count connections: kgo must not close its idle
	// seed connection (after 20 s by default) on a slow run.
	producer := e.client(tokenLogin(e.idp, "payments-app", &logins), kgo.DefaultProduceTopic("payments"),
		kgo.ConnIdleTimeout(time.Minute))
	produced := 0
	produce := func() {
		t.Helper()
		if err := producer.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "r%04d", produced)}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", produced, err)
		}
		produced++
	}
	produce()
	oldToken := e.idp.Mint(map[string]any{"sub": "svc-payments", "exp": time.Now().Add(time.Hour)})
	connections := testkit.MetricValue(t, e.proxy.Registry, "kproxy_connections_total")
	closedBefore := testkit.MetricValue(t, e.proxy.Registry, "kproxy_connections_closed_total")
	loginsBefore := logins.Load()

	run := func(d time.Duration) {
		for start := time.Now(); time.Since(start) < d; {
			produce()
			time.Sleep(50 * time.Millisecond)
		}
	}
	run(lifetime)
	e.idp.Rotate()
	rotatedAt := logins.Load()
	run(2 * lifetime)
	e.idp.RetireOld()
	run(lifetime)

	if closed := testkit.MetricValue(t, e.proxy.Registry, "kproxy_connections_closed_total") - closedBefore; closed != 0 {
		t.Errorf("kproxy closed %v connections during the run:\n%s", closed, e.log.String())
	}
	if now := testkit.MetricValue(t, e.proxy.Registry, "kproxy_connections_total"); now != connections {
		t.Errorf("the producer opened %v new connections", now-connections)
	}
	if n := logins.Load(); n-loginsBefore < 3 || n-rotatedAt < 2 {
		t.Errorf("%d re-authentications over the run, %d after the rotation: the session lifetime did not follow the token", n-loginsBefore, n-rotatedAt)
	}
	if failures := testkit.MetricValue(t, e.proxy.Registry, "kproxy_sasl_authentications_total", "mechanism", "OAUTHBEARER", "result", "failure"); failures != 0 {
		t.Errorf("%v failed logins", failures)
	}

	fresh := e.client(tokenLogin(e.idp, "payments-app", nil), kgo.DefaultProduceTopic("payments"))
	if err := fresh.ProduceSync(ctx, &kgo.Record{Value: []byte("new client")}).FirstErr(); err != nil {
		t.Fatalf("a new client with a token of the new key: %v", err)
	}
	stale := e.client(kgo.SASL(oauth.Auth{Token: oldToken}.AsMechanism()))
	if err := stale.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("a token of the retired key: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
	t.Logf("%d records, %d logins over %s", produced, logins.Load(), 4*lifetime)
}

// TestJWKSCAFile: the provider serves HTTPS with a certificate of a
// private CA. With jwks_ca_file naming that CA, kproxy fetches the keys
// and a client holding one of the provider's tokens logs in and produces;
// without it, kproxy's fetch fails on the certificate, so the same kind
// of login is refused with SASL_AUTHENTICATION_FAILED and kproxy's log
// names the certificate problem, never the token.
func TestJWKSCAFile(t *testing.T) {
	pki := certs.New(t)
	t.Run("trusted", func(t *testing.T) {
		e := newEnvWith(t, idp.Options{TLSCA: pki.CA}, "jwks_ca_file: "+pki.CAFile)
		if !strings.HasPrefix(e.idp.JWKSURL(), "https://") {
			t.Fatalf("provider at %s, want https", e.idp.JWKSURL())
		}
		ctx := testkit.Context(t, 30*time.Second)
		cl := e.client(tokenLogin(e.idp, "payments-app", nil), kgo.DefaultProduceTopic("payments"))
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("over https")}).FirstErr(); err != nil {
			t.Fatalf("produce with a token whose keys came over https: %v", err)
		}
		if n := testkit.MetricValue(t, e.proxy.Registry, "kproxy_oauth_jwks_fetches_total", "result", "failure"); n != 0 {
			t.Errorf("%v JWKS fetches failed", n)
		}
	})
	t.Run("system roots", func(t *testing.T) {
		e := newEnvWith(t, idp.Options{TLSCA: pki.CA}, "")
		ctx := testkit.Context(t, 30*time.Second)
		token, err := fetchToken(ctx, e.idp, "payments-app")
		if err != nil {
			t.Fatal(err)
		}
		before := len(e.log.Bytes())
		cl := e.client(kgo.SASL(oauth.Auth{Token: token}.AsMechanism()))
		if err := cl.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Fatalf("login without jwks_ca_file: %v, want SASL_AUTHENTICATION_FAILED", err)
		}
		cl.Close()
		logged := e.waitLog(t, before, `"reason":"sasl_failed"`)
		if !slices.ContainsFunc(strings.Split(logged, "\n"), func(l string) bool {
			return strings.Contains(l, "sasl_failed") && strings.Contains(l, "x509: certificate signed by unknown authority")
		}) {
			t.Fatalf("no log line says the login failed on the provider's certificate:\n%s", logged)
		}
		if strings.Contains(logged, token) || strings.Contains(logged, strings.Split(token, ".")[1]) {
			t.Fatal("kproxy logged the token")
		}
		if n := testkit.MetricValue(t, e.proxy.Registry, "kproxy_oauth_jwks_fetches_total", "result", "success"); n != 0 {
			t.Errorf("%v JWKS fetches succeeded with the system roots", n)
		}
	})
}
