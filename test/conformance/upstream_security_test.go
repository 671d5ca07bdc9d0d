package conformance

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// The upstream-scram-tls and upstream-oauth scenarios are every client's
// tls-scram cell (TLS and SCRAM-SHA-512 to kproxy) with kproxy reaching the
// real cluster's SASL_SSL listener (test/kafka/cluster.sh: a test CA,
// SCRAM-SHA-512 users, OAUTHBEARER tokens checked by Kafka's
// OAuthBearerValidatorCallbackHandler against the test identity provider,
// connections.max.reauth.ms 10 s) over TLS, logging in with SCRAM-SHA-512
// or with an OAuth token of its own (client-credentials grant). franz-go's
// cells also hold one connection open across a KIP-368 re-authentication
// towards the broker and, for OAuth, a token refresh, and check kproxy's
// metrics saw both. `cluster.sh env` prints the variables read here.
const (
	scenarioUpstreamSCRAM = "upstream-scram-tls"
	scenarioUpstreamOAuth = "upstream-oauth"
)

func init() {
	tlsCells := map[string]cellFn{
		"sarama": saramaTLSSCRAM, "kafka-go": kafkagoTLSSCRAM, "kcat": kcatTLSSCRAM,
		"confluent-kafka": confluentTLSSCRAM, "java": javaTLSSCRAM,
	}
	for client, fn := range tlsCells {
		register(client, scenarioUpstreamSCRAM, fn)
		register(client, scenarioUpstreamOAuth, fn)
	}
	register("franz-go", scenarioUpstreamSCRAM, franzUpstreamSecurity)
	register("franz-go", scenarioUpstreamOAuth, franzUpstreamSecurity)
}

// upstreamSecurityNA is why the scenarios do not run on kfake.
const upstreamSecurityNA = "the scenario is about the real broker's SASL_SSL listener, which kfake does not have (kproxy's upstream TLS, SCRAM and OAUTHBEARER against kfake are test/e2e/security's)"

// securityEnv is the real cluster's SASL_SSL listener, from cluster.sh env.
type securityEnv struct {
	bootstrap                           []string
	caFile, scramUser, scramPassFile    string
	tokenEndpoint, clientID, secretFile string
}

// realSecurityEnv reads the listener's settings; missing names the unset
// variables.
func realSecurityEnv() (s securityEnv, missing []string) {
	get := func(name string) string {
		v := strings.TrimSpace(os.Getenv(name))
		if v == "" {
			missing = append(missing, name)
		}
		return v
	}
	for _, a := range strings.Split(get("KPROXY_KAFKA_SASL_SSL_BOOTSTRAP"), ",") {
		if a = strings.TrimSpace(a); a != "" {
			s.bootstrap = append(s.bootstrap, a)
		}
	}
	s.caFile = get("KPROXY_KAFKA_CA_FILE")
	s.scramUser, s.scramPassFile = get("KPROXY_KAFKA_SCRAM_USER"), get("KPROXY_KAFKA_SCRAM_PASSWORD_FILE")
	s.tokenEndpoint, s.clientID = get("KPROXY_KAFKA_OAUTH_TOKEN_ENDPOINT"), get("KPROXY_KAFKA_OAUTH_CLIENT_ID")
	s.secretFile = get("KPROXY_KAFKA_OAUTH_CLIENT_SECRET_FILE")
	return s, missing
}

// startUpstreamSecurity starts e.upSCRAM and e.upOAuth in front of the real
// cluster's SASL_SSL listener, or sets e.upSkip to why it cannot.
func (e *env) startUpstreamSecurity(t *testing.T) {
	t.Helper()
	s, missing := realSecurityEnv()
	if len(missing) > 0 {
		e.upSkip = "the real cluster's SASL_SSL listener is not configured: set " + strings.Join(missing, ", ") + " (eval \"$(test/kafka/cluster.sh env)\")"
		return
	}
	for _, a := range s.bootstrap {
		_, p, _ := net.SplitHostPort(a)
		n, _ := strconv.Atoi(p)
		e.ports[n] = true // a client must never reach these directly either
	}
	tls := fmt.Sprintf("  tls: {ca_file: %q}\n", s.caFile)
	e.upSCRAM = kproxytest.Start(t, secureYAMLWith(t, e.pki, s.bootstrap, tls+fmt.Sprintf(
		"  sasl: {mechanism: SCRAM-SHA-512, username: %s, password_file: %q}\n", s.scramUser, s.scramPassFile)))
	e.upOAuth = kproxytest.Start(t, secureYAMLWith(t, e.pki, s.bootstrap, tls+fmt.Sprintf(
		"  sasl: {mechanism: OAUTHBEARER, token_endpoint: %q, client_id: %s, client_secret_file: %q, scope: kafka}\n",
		s.tokenEndpoint, s.clientID, s.secretFile)))
}

// upstreamSecurityProxy is the kproxy of an upstream-* scenario, or nil.
func (e *env) upstreamSecurityProxy(scenario string) *kproxytest.Kproxy {
	switch scenario {
	case scenarioUpstreamSCRAM:
		return e.upSCRAM
	case scenarioUpstreamOAuth:
		return e.upOAuth
	}
	return nil
}

// isUpstreamSecurity reports whether scenario is one of this file's.
func isUpstreamSecurity(scenario string) bool {
	return scenario == scenarioUpstreamSCRAM || scenario == scenarioUpstreamOAuth
}

// franzUpstreamSecurity is franz-go's tls-scram round trip, then one
// producer connection held across the broker's session lifetime: kproxy
// must re-authenticate it in place (KIP-368) and, with OAuth, fetch a new
// token before the first one's end, while records keep flowing.
func franzUpstreamSecurity(t *testing.T, c *cellCtx, e *env) {
	franzTLSSCRAM(t, c, e)
	if t.Failed() {
		return
	}
	px := e.tlsProxy(c)
	oauth := c.key.scenario == scenarioUpstreamOAuth
	topic := e.newTopic(t, c, "long", 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.seed(px)), kgo.DialTLSConfig(clientTLS(t, e)), kgo.SASL(scramMechanism(true)),
		kgo.DefaultProduceTopic(topic), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	reauths := func() float64 {
		return testkit.MetricValue(t, px.Registry, "kproxy_upstream_reauthentications_total", "result", "success")
	}
	tokens := func() float64 {
		return testkit.MetricValue(t, px.Registry, "kproxy_upstream_oauth_token_requests_total", "result", "success")
	}
	reauthsBefore, tokensBefore := reauths(), tokens()
	// The broker's sessions last 10 s (connections.max.reauth.ms), and the
	// test IdP's tokens 20 s, refreshed at 80%: 25 s see at least one of
	// each on this connection.
	sent := 0
	for start := time.Now(); time.Since(start) < 25*time.Second || reauths() == reauthsBefore || (oauth && tokens() == tokensBefore); sent++ {
		if ctx.Err() != nil {
			t.Fatalf("after %d records: no re-authentication (%v → %v) or token refresh (%v → %v) seen", sent, reauthsBefore, reauths(), tokensBefore, tokens())
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "r%04d", sent)}).FirstErr(); err != nil {
			t.Fatalf("produce %d on the long-lived connection: %v", sent, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if failed := testkit.MetricValue(t, px.Registry, "kproxy_upstream_reauthentications_total", "result", "failure"); failed > 0 {
		t.Errorf("%v upstream re-authentications failed", failed)
	}
	c.note("%d records on one connection over %d upstream re-authentication(s)", sent, int(reauths()-reauthsBefore))
	if oauth {
		c.note("%d token refresh(es)", int(tokens()-tokensBefore))
	}
	got := franzConsumeGroup(t, []string{e.seed(px)}, name(c, "long-g"), topic, sent, kgo.DialTLSConfig(clientTLS(t, e)), kgo.SASL(scramMechanism(true)))
	if len(got) != sent {
		t.Errorf("consumed %d of %d records", len(got), sent)
	}
}
