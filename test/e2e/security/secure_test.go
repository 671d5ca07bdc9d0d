package e2esecurity

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/tlsconfig"
)

// secureUpstream starts kfake requiring TLS and SCRAM-SHA-256 from kproxy.
func secureUpstream(t *testing.T, p certs.Files, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	serverTLS, _, err := tlsconfig.ServerConfig(p.ServerCert, p.ServerKey, "none", "")
	if err != nil {
		t.Fatal(err)
	}
	return testkit.Cluster(t, 3, append([]kfake.Opt{kfake.TLS(serverTLS), kfake.EnableSASL(), kfake.AllowAutoTopicCreation(),
		kfake.Superuser("SCRAM-SHA-256", "kproxy-svc", "upstream-secret")}, opts...)...)
}

func proxyYAML(t *testing.T, p certs.Files, bootstrap []string, clientAuth, saslMode string) string {
	t.Helper()
	cred, err := auth.HashPassword(auth.ScramSHA512, "alice-secret", 4096)
	if err != nil {
		t.Fatal(err)
	}
	pwFile := testkit.WriteFile(t, "upstream-password", "upstream-secret\n")
	saslBlock := fmt.Sprintf(`
  sasl:
    mode: terminate
    mechanisms: [SCRAM-SHA-512, PLAIN]
    users: [{name: alice, credentials: ["%s"]}]`, cred)
	upstreamSASL := fmt.Sprintf(`
  sasl: {mechanism: SCRAM-SHA-256, username: kproxy-svc, password_file: %s}`, pwFile)
	if saslMode == "passthrough" {
		saslBlock = "\n  sasl: {mode: passthrough}"
		upstreamSASL = ""
	}
	clientCA := ""
	if clientAuth != "none" {
		clientCA = ", client_ca_file: " + p.CAFile
	}
	y := fmt.Sprintf(`
upstream:
  bootstrap_servers: [%q]
  dial_timeout: 5s
  tls: {ca_file: %s}%s
listeners:
  bind_host: 127.0.0.1
  tls: {cert_file: %s, key_file: %s, client_auth: %s%s}%s
log: {level: warn}
`, bootstrap[0], p.CAFile, upstreamSASL, p.ServerCert, p.ServerKey, clientAuth, clientCA, saslBlock)
	return y
}

func clientTLS(t *testing.T, p certs.Files, withCert bool) *tls.Config {
	t.Helper()
	cert, key := "", ""
	if withCert {
		cert, key = p.ClientCert, p.ClientKey
	}
	tc, err := tlsconfig.ClientConfig(p.CAFile, "", cert, key, false)
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

func roundTrip(t *testing.T, opts ...kgo.Opt) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topic := "secure-" + t.Name()
	cl, err := kgo.NewClient(append(opts,
		kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic(topic),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.RequestRetries(2), kgo.RetryTimeout(5*time.Second))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for i := range 100 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "v%d", i)}).FirstErr(); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
	}
	got := 0
	for got < 100 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return fmt.Errorf("consume: %w", err)
		}
		got += fs.NumRecords()
	}
	return nil
}

// A franz-go client over TLS + SCRAM-SHA-512 to kproxy, kproxy over TLS +
// SCRAM-SHA-256 to the upstream: produce and consume work, and the client
// holds no upstream credential.
func TestTLSAndSCRAMBothWays(t *testing.T) {
	px, overTLS := secureKproxy(t, "terminate")
	alice := scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()
	if err := roundTrip(t, append(overTLS, kgo.SASL(alice))...); err != nil {
		t.Fatal(err)
	}
	expectSASLCounted(t, px, "SCRAM-SHA-512", "success")
}

// secureKproxy starts secureUpstream and kproxy in front of it, without
// client certificates and with SASL in saslMode, and returns kproxy and
// the client options that reach it over TLS.
func secureKproxy(t *testing.T, saslMode string) (*kproxytest.Kproxy, []kgo.Opt) {
	t.Helper()
	p := certs.New(t)
	cluster := secureUpstream(t, p)
	px := kproxytest.Start(t, proxyYAML(t, p, cluster.ListenAddrs(), "none", saslMode))
	return px, []kgo.Opt{kgo.SeedBrokers(px.BootstrapAddr()), kgo.DialTLSConfig(clientTLS(t, p, false))}
}

// expectSASLCounted checks kproxy_sasl_authentications_total counted at
// least one login with mechanism and result.
func expectSASLCounted(t *testing.T, px *kproxytest.Kproxy, mechanism, result string) {
	t.Helper()
	if n := testkit.MetricValue(t, px.Registry, "kproxy_sasl_authentications_total", "mechanism", mechanism, "result", result); n < 1 {
		t.Errorf("kproxy_sasl_authentications_total{mechanism=%q,result=%q} = %v, want > 0", mechanism, result, n)
	}
}

func TestWrongPasswordGetsSASLAuthenticationFailed(t *testing.T) {
	px, overTLS := secureKproxy(t, "terminate")
	wrong := scram.Auth{User: "alice", Pass: "not-it"}.AsSha512Mechanism()
	cl := testkit.Client(t, append(overTLS, kgo.SASL(wrong), kgo.RequestRetries(0))...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("wrong password: got %v, want SASL_AUTHENTICATION_FAILED", err)
	}
	expectSASLCounted(t, px, "SCRAM-SHA-512", "failure")
}

// In passthrough mode the client's own SCRAM exchange reaches the upstream.
func TestSASLPassthrough(t *testing.T) {
	px, overTLS := secureKproxy(t, "passthrough")
	svc := scram.Auth{User: "kproxy-svc", Pass: "upstream-secret"}.AsSha256Mechanism()
	if err := roundTrip(t, append(overTLS, kgo.SASL(svc))...); err != nil {
		t.Fatal(err)
	}
	expectSASLCounted(t, px, "SCRAM-SHA-256", "success") // the upstream's verdict, watched
}
