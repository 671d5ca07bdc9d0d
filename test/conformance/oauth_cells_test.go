package conformance

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/idp"
)

// The oauth scenario's cells (oauth_test.go sets the scenario up). kcat is
// N/A: Debian's librdkafka 2.0.2 is built without OIDC (matrix_test.go).
func init() {
	register("franz-go", "oauth", franzOAuth)
	register("sarama", "oauth", saramaOAuth)
	register("kafka-go", "oauth", kafkagoOAuth)
	register("confluent-kafka", "oauth", confluentOAuth)
	register("java", "oauth", javaOAuth)
}

// deniedRecords is how many records a cell tries to produce to the denied
// topic: every one must fail.
const deniedRecords = 5

// franzOAuth: franz-go's sasl/oauth with the provider's tokens round-trips
// records through the allowed topic; the denied topic, another principal's
// token on the allowed topic and a token with a broken signature are
// refused.
func franzOAuth(t *testing.T, c *cellCtx, e *env) {
	allowed, denied := e.oauthTopics(t, c)
	seed := e.seed(e.oauth)
	opts := []kgo.Opt{kgo.DialTLSConfig(clientTLS(t, e)), kgo.SASL(e.tokens().mechanism())}
	cl := e.kgoOAuthClient(t, opts...)
	want := makeRecs("oauth", oauthRecords)
	franzProduce(t, cl, allowed, want)
	group := name(c, "g")
	checkRecords(t, "franz-go with OAUTHBEARER", franzConsumeGroup(t, []string{seed}, group, allowed, len(want), opts...), want)
	e.checkCommitted(t, group, allowed, int64(len(want)))

	checkFranzDenied(t, "produce to "+denied, cl, denied)
	other := e.kgoOAuthClient(t, kgo.DialTLSConfig(clientTLS(t, e)),
		kgo.SASL((&oauthTokens{p: e.idp, id: oauthOtherID, secret: oauthOtherSecret}).mechanism()))
	checkFranzDenied(t, "produce to "+allowed+" as User:"+oauthOtherSub, other, allowed)

	forged := e.idp.Mint(map[string]any{"sub": oauthSubject}, idp.BadSignature())
	bad := e.kgoOAuthClient(t, kgo.DialTLSConfig(clientTLS(t, e)), kgo.SASL(oauth.Auth{Token: forged}.AsMechanism()), kgo.RequestRetries(0))
	ctx, cancel := ctxTimeout(10 * time.Second)
	defer cancel()
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, bad); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Errorf("a token with a broken signature: got %v, want SASL_AUTHENTICATION_FAILED", err)
	}
}

// kgoOAuthClient is a franz-go client of e.oauth, closed when t ends.
func (e *env) kgoOAuthClient(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return testkit.Client(t, append([]kgo.Opt{kgo.SeedBrokers(e.seed(e.oauth))}, opts...)...)
}

// checkFranzDenied fails unless every record cl produces to topic fails
// with TOPIC_AUTHORIZATION_FAILED.
func checkFranzDenied(t *testing.T, what string, cl *kgo.Client, topic string) {
	t.Helper()
	ctx, cancel := ctxTimeout(30 * time.Second)
	defer cancel()
	var krs []*kgo.Record
	for _, r := range makeRecs("denied", deniedRecords) {
		krs = append(krs, &kgo.Record{Topic: topic, Key: []byte(r.key), Value: []byte(r.value)})
	}
	for _, r := range cl.ProduceSync(ctx, krs...) {
		if !errors.Is(r.Err, kerr.TopicAuthorizationFailed) {
			t.Errorf("franz-go %s: record %s got %v, want TOPIC_AUTHORIZATION_FAILED", what, r.Record.Value, r.Err)
		}
	}
}

// saramaOAuth: sarama's OAUTHBEARER with an AccessTokenProvider.
func saramaOAuth(t *testing.T, c *cellCtx, e *env) {
	allowed, denied := e.oauthTopics(t, c)
	tokens := e.tokens()
	config := func() *sarama.Config {
		cfg := saramaSASLConfig(t, e, sarama.SASLTypeOAuth)
		cfg.Net.SASL.TokenProvider = tokens
		return cfg
	}
	seed := e.seed(e.oauth)
	producer := saramaProducer(t, saramaClient(t, seed, config()))
	want := makeRecs("oauth", oauthRecords)
	saramaProduce(t, producer, allowed, want)
	group := name(c, "g")
	checkRecords(t, "sarama with OAUTHBEARER", saramaConsumeGroup(t, seed, config(), group, allowed, len(want), nil), want)
	e.checkCommitted(t, group, allowed, int64(len(want)))

	var msgs []*sarama.ProducerMessage
	for _, r := range makeRecs("denied", deniedRecords) {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: denied, Key: sarama.StringEncoder(r.key), Value: sarama.StringEncoder(r.value)})
	}
	err := producer.SendMessages(msgs)
	var pes sarama.ProducerErrors
	if !errors.As(err, &pes) || len(pes) != len(msgs) {
		t.Fatalf("sarama produce to %s: got %v, want every record to fail with TOPIC_AUTHORIZATION_FAILED", denied, err)
	}
	for _, pe := range pes {
		if !errors.Is(pe.Err, sarama.ErrTopicAuthorizationFailed) {
			t.Errorf("sarama produce to %s: %v, want TOPIC_AUTHORIZATION_FAILED", denied, pe.Err)
		}
	}
}

// kafkagoOAuth: kafka-go (its SaslHandshake/SaslAuthenticate) with
// franz-go's OAUTHBEARER messages: kafka-go ships no OAUTHBEARER mechanism,
// its sasl.Mechanism interface is how an application plugs one in.
func kafkagoOAuth(t *testing.T, c *cellCtx, e *env) {
	allowed, denied := e.oauthTopics(t, c)
	sec := kafkagoSecurity{tls: clientTLS(t, e), sasl: kafkagoSASL{e.tokens().mechanism()}}
	seed := e.seed(e.oauth)
	want := makeRecs("oauth", oauthRecords)
	kafkagoWrite(t, seed, sec, allowed, want)
	group := name(c, "g")
	checkRecords(t, "kafka-go with OAUTHBEARER", kafkagoRead(t, seed, sec, group, allowed, len(want), kafka.ReadUncommitted), want)
	e.checkCommitted(t, group, allowed, int64(len(want)))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := &kafka.Writer{Addr: kafka.TCP(seed), Topic: denied, RequiredAcks: kafka.RequireAll, MaxAttempts: 1,
		Transport: &kafka.Transport{TLS: sec.tls, SASL: sec.sasl}}
	defer w.Close()
	var msgs []kafka.Message
	for _, r := range makeRecs("denied", deniedRecords) {
		msgs = append(msgs, kafka.Message{Key: []byte(r.key), Value: []byte(r.value)})
	}
	err := w.WriteMessages(ctx, msgs...)
	var wes kafka.WriteErrors
	if !errors.As(err, &wes) || wes.Count() != len(msgs) {
		t.Fatalf("kafka-go write to %s: got %v, want every record to fail with TOPIC_AUTHORIZATION_FAILED", denied, err)
	}
	for _, we := range wes {
		if !errors.Is(we, kafka.TopicAuthorizationFailed) {
			t.Errorf("kafka-go write to %s: %v, want TOPIC_AUTHORIZATION_FAILED", denied, we)
		}
	}
}

// confluentOAuth: librdkafka fetches its own tokens
// (sasl.oauthbearer.method=oidc) from the provider's token endpoint.
func confluentOAuth(t *testing.T, c *cellCtx, e *env) {
	requireConfluent(t, c)
	allowed, denied := e.oauthTopics(t, c)
	e.confluentRoundTrip(t, e.oauth, allowed, name(c, "g"), "classic", "oauth", oauthRecords)
	var out struct {
		Acked  int      `json:"acked"`
		Errors []string `json:"errors"`
	}
	e.confluent(t, e.oauth, &out, "produce", "--topic", denied, "--records", strconv.Itoa(deniedRecords), "--allow-errors")
	checkAllDenied(t, "confluent-kafka produce to "+denied, out.Acked, out.Errors, "TOPIC_AUTHORIZATION_FAILED")
}

// javaOAuth: Kafka's verifiable producer and consumer with
// OAuthBearerLoginCallbackHandler fetching tokens from the provider.
func javaOAuth(t *testing.T, c *cellCtx, e *env) {
	requireJava(t, c)
	allowed, denied := e.oauthTopics(t, c)
	acked := e.javaProduce(t, e.oauth, allowed, 1, oauthRecords)
	group := name(c, "g")
	gs := e.javaConsume(t, e.oauth, allowed, group, "classic", oauthRecords)
	checkAcked(t, "kafka-verifiable-consumer with OAUTHBEARER", gs, acked)
	checkRecords(t, "kafka-verifiable-consumer with OAUTHBEARER", gs, asRecs(acked))
	e.checkCommitted(t, group, allowed, oauthRecords)

	p := e.java(t, e.oauth, nil, "kafka-verifiable-producer", "--bootstrap-server", e.seed(e.oauth), "--topic", denied,
		"--max-messages", strconv.Itoa(deniedRecords), "--acks", "-1", "--command-config", e.javaProps(t, e.oauth, verifiableProducerProps...))
	deniedAcked, errs, _ := verifiableProduced(t, parseVerifiable(t, p.stdout.String()))
	checkAllDenied(t, "kafka-verifiable-producer to "+denied, len(deniedAcked), errs, "TopicAuthorizationException")
}

// checkAllDenied fails unless none of deniedRecords records was acked and
// each failed with an error that says want.
func checkAllDenied(t *testing.T, what string, acked int, errs []string, want string) {
	t.Helper()
	if acked != 0 || len(errs) != deniedRecords {
		t.Errorf("%s: %d acked and %d failed of %d records, want all failed (errors: %q)", what, acked, len(errs), deniedRecords, errs)
	}
	for _, err := range errs {
		if !strings.Contains(err, want) {
			t.Errorf("%s: %s, want %s", what, err, want)
		}
	}
}
