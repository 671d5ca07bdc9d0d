package e2esecurity

import (
	"context"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
	"github.com/kproxy/kproxy/internal/testpki"
	"github.com/kproxy/kproxy/internal/tlsconfig"
)

// startWithPolicy starts kproxy from yaml with its policy section enforced,
// logging at debug level into the returned buffer.
func startWithPolicy(t *testing.T, yaml string) (*kproxytest.Kproxy, *logbuf.Buffer) {
	t.Helper()
	logs := &logbuf.Buffer{}
	return kproxytest.Start(t, yaml, kproxytest.WithLog(logs, zerolog.DebugLevel)), logs
}

// TestMultiCNCertificateRefused: a client certificate whose subject holds
// CN=alice and CN=admin (Go's parser keeps the last, admin) does not get
// the principal admin under principal_from: cn, nor alice: the TLS
// connection is refused, and the log line shows the whole subject. A
// certificate with the one CN admin still writes, so the refusal rests on
// the second CN.
func TestMultiCNCertificateRefused(t *testing.T) {
	p := certs.New(t)
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "admin.only"))
	px, logs := startWithPolicy(t, testkit.Config{Upstream: cluster.ListenAddrs(), ListenerKeys: serverTLS(p, true), Extra: `
policy:
  default: deny
  rules:
    - {name: describe-all, principals: ["*"], allow: [describe], topics: ["*"]}
    - {name: admin-writes, principals: ["User:admin", "cn:admin"], allow: [write], topics: ["admin.only"]}
`}.YAML())
	ctx := testkit.Context(t, 60*time.Second)
	clientFor := func(name string, l testpki.Leaf) *kgo.Client {
		t.Helper()
		certFile, keyFile, err := p.CA.WriteLeaf(p.Dir, name, l)
		if err != nil {
			t.Fatal(err)
		}
		tc, err := tlsconfig.ClientConfig(p.CAFile, "", certFile, keyFile, false)
		if err != nil {
			t.Fatal(err)
		}
		return newClient(t, kgo.SeedBrokers(px.BootstrapAddr()), kgo.DialTLSConfig(tc), kgo.DisableIdempotentWrite(),
			kgo.RequestRetries(1), kgo.RecordRetries(1))
	}

	admin := clientFor("admin", testpki.Leaf{CommonName: "admin", Client: true})
	if err := admin.ProduceSync(ctx, &kgo.Record{Topic: "admin.only", Value: []byte("by admin")}).FirstErr(); err != nil {
		t.Fatalf("CN=admin producing to admin.only: %v", err)
	}

	cn := asn1.ObjectIdentifier{2, 5, 4, 3}
	refusedBefore := closedTotal(t, px.Registry, "tls_failed")
	twoCNs := clientFor("two-cns", testpki.Leaf{Client: true,
		ExtraNames: []pkix.AttributeTypeAndValue{{Type: cn, Value: "alice"}, {Type: cn, Value: "admin"}}})
	err := twoCNs.ProduceSync(ctx, &kgo.Record{Topic: "admin.only", Value: []byte("as admin?")}).FirstErr()
	if err == nil {
		t.Fatal("a certificate with CN=alice and CN=admin wrote to admin.only")
	}
	if errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("CN=alice,CN=admin reached the policy (%v); want the connection refused at TLS", err)
	}
	if !waitFor(5*time.Second, func() bool { return closedTotal(t, px.Registry, "tls_failed") > refusedBefore }) {
		t.Errorf("no connection closed with reason tls_failed")
	}
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "more than one CN") {
			line = l
			break
		}
	}
	t.Logf("refusal: %s", line)
	if !strings.Contains(line, "CN=alice") || !strings.Contains(line, "CN=admin") {
		t.Errorf("refusal log line does not show both CNs: %q", line)
	}
}

// TestPassthroughPrincipalIsTheBrokers: in passthrough mode the principal
// the policy sees is the one the broker authenticates, or the login is
// refused.
//   - A PLAIN password longer than 255 bytes (Kafka sets no limit): the
//     user is still alice, so a User:alice deny applies (it was ANONYMOUS,
//     and the deny was skipped).
//   - A SCRAM message with Kafka's reserved m= attribute names its user.
//   - A delegation token (tokenauth=true), whose principal is the owner
//     kproxy cannot know: refused with SASL_AUTHENTICATION_FAILED by kproxy.
func TestPassthroughPrincipalIsTheBrokers(t *testing.T) {
	p := certs.New(t)
	longPassword := strings.Repeat("p", 300)
	cluster := secureUpstream(t, p, kfake.Superuser("PLAIN", "alice", longPassword), kfake.SeedTopics(1, "guarded", "open"))
	px, logs := startWithPolicy(t, proxyYAML(t, p, cluster.ListenAddrs(), "none", "passthrough")+`
policy:
  default: allow
  rules:
    - {name: alice-not-guarded, principals: ["User:alice"], deny: [write], topics: ["guarded"]}
`)
	ctx := testkit.Context(t, 60*time.Second)

	alice := newClient(t, kgo.SeedBrokers(px.BootstrapAddr()), kgo.DialTLSConfig(clientTLS(t, p, false)),
		kgo.SASL(plain.Auth{User: "alice", Pass: longPassword}.AsMechanism()), kgo.DisableIdempotentWrite(), kgo.RequestRetries(1), kgo.RecordRetries(1))
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "open", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("alice (300-byte PLAIN password) producing to open: %v", err)
	}
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "guarded", Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("alice producing to guarded: %v, want TOPIC_AUTHORIZATION_FAILED from the User:alice deny", err)
	}

	// Kafka's client-first grammar allows a reserved m= attribute.
	c, err := dialRawTLS(t, px.BootstrapAddr(), clientTLS(t, p, false))
	if err != nil {
		t.Fatal(err)
	}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = "SCRAM-SHA-256"
	if _, err := c.RoundTrip(hs); err != nil {
		t.Fatal(err)
	}
	first := kmsg.NewPtrSASLAuthenticateRequest()
	first.SetVersion(2)
	first.SASLAuthBytes = []byte("n,,m=reserved,n=kproxy-svc,r=fyko+d2lbbFgONRv9qkxdawL")
	c.RoundTrip(first) // what the upstream answers does not matter here
	if !waitFor(5*time.Second, func() bool {
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, `"user":"kproxy-svc"`) && strings.Contains(l, "client authenticating upstream") {
				return true
			}
		}
		return false
	}) {
		t.Errorf("no passthrough log line naming kproxy-svc for a client-first message with m=:\n%s", logs.String())
	}

	// A delegation token: refused by kproxy, with a reason in the log.
	token := newClient(t, kgo.SeedBrokers(px.BootstrapAddr()), kgo.DialTLSConfig(clientTLS(t, p, false)),
		kgo.SASL(scram.Auth{User: "token-id", Pass: "token-hmac", IsToken: true}.AsSha256Mechanism()), kgo.RequestRetries(0))
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = token.Ping(pingCtx)
	if !errors.Is(err, kerr.SaslAuthenticationFailed) || !strings.Contains(err.Error(), "kproxy cannot determine the principal") {
		t.Fatalf("delegation token through passthrough: %v, want SASL_AUTHENTICATION_FAILED from kproxy", err)
	}
	// The close, and its log line, follow the answer the client just read.
	if !waitFor(5*time.Second, func() bool { return strings.Contains(logs.String(), "delegation token (tokenauth=true)") }) {
		t.Errorf("no log line saying why the delegation token was refused:\n%s", logs.String())
	}
}

// TestPassthroughWithoutFiltersForwardsUnreadableLogins: with no request
// filter (no policy), nothing decides by principal, so a login whose
// principal kproxy cannot read (here a delegation token) is forwarded for
// the broker to decide, with a warning, rather than refused by kproxy.
func TestPassthroughWithoutFiltersForwardsUnreadableLogins(t *testing.T) {
	p := certs.New(t)
	cluster := secureUpstream(t, p, kfake.Superuser("PLAIN", "alice", "alice-pass"))
	logs := &logbuf.Buffer{}
	px := kproxytest.Start(t, proxyYAML(t, p, cluster.ListenAddrs(), "none", "passthrough"), kproxytest.WithLog(logs, zerolog.DebugLevel))
	ctx := testkit.Context(t, 30*time.Second)

	token := newClient(t, kgo.SeedBrokers(px.BootstrapAddr()), kgo.DialTLSConfig(clientTLS(t, p, false)),
		kgo.SASL(scram.Auth{User: "token-id", Pass: "token-hmac", IsToken: true}.AsSha256Mechanism()), kgo.RequestRetries(0))
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := token.Ping(pingCtx)
	if err == nil {
		t.Fatal("kfake accepted a delegation token it never issued")
	}
	if strings.Contains(err.Error(), "kproxy cannot determine the principal") {
		t.Fatalf("kproxy refused the login itself with no filter configured: %v", err)
	}
	if !waitFor(5*time.Second, func() bool { return strings.Contains(logs.String(), "principal unknown to kproxy") }) {
		t.Errorf("no warning that the login was forwarded with an unknown principal:\n%s", logs.String())
	}
}
