package e2esecurity

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
	"github.com/kproxy/kproxy/internal/testpki"
	"github.com/kproxy/kproxy/internal/tlsconfig"
)

const mtlsPolicy = `
policy:
  default: deny
  rules:
    - {name: describe-all, principals: ["*"], allow: [describe], topics: ["*"]}
    - {name: cn-writes-a, principals: ["User:%[1]s"], allow: [write], topics: ["mtls.a"]}
    - {name: cn-not-b, principals: ["User:%[1]s"], deny: [write], topics: ["mtls.b"]}
`

// TestMTLSPrincipalFeedsPolicy: with client_auth require and principal_from
// cn, the client certificate's CN is the user the policy sees. The test
// client may write topic A and is denied topic B; a certificate with
// another CN from the same CA may write neither; a client without a
// certificate does not get past the TLS handshake.
func TestMTLSPrincipalFeedsPolicy(t *testing.T) {
	p := certs.New(t)
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "mtls.a", "mtls.b"))
	yaml := testkit.Config{Upstream: cluster.ListenAddrs(), ListenerKeys: serverTLS(p, true),
		Extra: fmt.Sprintf(mtlsPolicy, testpki.ClientCN)}.YAML()
	audit := kproxytest.NewAuditFile(t)
	yaml += fmt.Sprintf("audit: {output: %q}\n", audit)
	px := kproxytest.Start(t, yaml)
	ctx := testkit.Context(t, 60*time.Second)

	withCert := newClient(t, kgo.SeedBrokers(px.BootstrapAddr()), kgo.DialTLSConfig(clientTLS(t, p, true)),
		kgo.RequestRetries(2), kgo.RecordRetries(2))
	if err := withCert.ProduceSync(ctx, &kgo.Record{Topic: "mtls.a", Value: []byte("by CN")}).FirstErr(); err != nil {
		t.Fatalf("%s producing to mtls.a: %v", testpki.ClientCN, err)
	}
	err := withCert.ProduceSync(ctx, &kgo.Record{Topic: "mtls.b", Value: []byte("denied")}).FirstErr()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("%s producing to mtls.b: %v, want TOPIC_AUTHORIZATION_FAILED", testpki.ClientCN, err)
	}

	// Another CN from the same, trusted CA: the policy names only the
	// test client, so the decision really rests on the certificate.
	otherCert, otherKey, err := p.CA.WriteLeaf(p.Dir, "other", testpki.Leaf{CommonName: "someone-else", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	otherTLS, err := tlsconfig.ClientConfig(p.CAFile, "", otherCert, otherKey, false)
	if err != nil {
		t.Fatal(err)
	}
	other := newClient(t, kgo.SeedBrokers(px.BootstrapAddr()), kgo.DialTLSConfig(otherTLS),
		kgo.DisableIdempotentWrite(), kgo.RequestRetries(2), kgo.RecordRetries(2))
	err = other.ProduceSync(ctx, &kgo.Record{Topic: "mtls.a", Value: []byte("not allowed")}).FirstErr()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("CN someone-else producing to mtls.a: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	// What reached the cluster: the one allowed record.
	direct := kadm.NewClient(newClient(t, kgo.SeedBrokers(cluster.ListenAddrs()...)))
	ends, err := direct.ListEndOffsets(ctx, "mtls.a", "mtls.b")
	if err != nil {
		t.Fatal(err)
	}
	for topic, want := range map[string]int64{"mtls.a": 1, "mtls.b": 0} {
		if o, _ := ends.Lookup(topic, 0); o.Offset != want {
			t.Errorf("%s end offset %d, want %d", topic, o.Offset, want)
		}
	}

	// The audit log names the principal taken from the certificate.
	// Audit lines are written behind the requests: wait for the denial's.
	testkit.WaitFor(5*time.Second, func() bool { return strings.Contains(audit.String(t), `"rule":"cn-not-b"`) })
	if a := audit.String(t); !strings.Contains(a, `"principal":"User:`+testpki.ClientCN+`"`) || !strings.Contains(a, `"rule":"cn-not-b"`) {
		t.Errorf("audit log does not show the denial of User:%s by cn-not-b:\n%s", testpki.ClientCN, a)
	}

	// No certificate: refused in the handshake. With TLS 1.2 the handshake
	// itself fails; with TLS 1.3 the client learns of it on its first read.
	refusedBefore := closedTotal(t, px.Registry, "tls_failed")
	noCert12 := clientTLS(t, p, false)
	noCert12.MaxVersion = tls.VersionTLS12
	if c, err := dialRawTLS(t, px.BootstrapAddr(), noCert12); err == nil {
		c.Close()
		t.Fatal("TLS 1.2 handshake without a client certificate succeeded")
	}
	c13, err := dialRawTLS(t, px.BootstrapAddr(), clientTLS(t, p, false))
	if err == nil {
		_, err = c13.APIVersions()
	}
	if err == nil || !strings.Contains(err.Error(), "certificate required") {
		t.Fatalf("TLS 1.3 without a client certificate: %v, want the certificate required alert", err)
	}
	if !waitFor(5*time.Second, func() bool { return closedTotal(t, px.Registry, "tls_failed") >= refusedBefore+2 }) {
		t.Errorf("kproxy_connections_closed_total{reason=tls_failed} %v, want %v", closedTotal(t, px.Registry, "tls_failed"), refusedBefore+2)
	}
	noCert := newClient(t, kgo.SeedBrokers(px.BootstrapAddr()), kgo.DialTLSConfig(clientTLS(t, p, false)), kgo.RequestRetries(0))
	if err := noCert.Ping(ctx); err == nil {
		t.Fatal("franz-go without a client certificate reached the cluster")
	}
}

func servedSerial(t *testing.T, c *rawConn) *big.Int {
	t.Helper()
	st := c.Conn.(*tls.Conn).ConnectionState()
	if len(st.PeerCertificates) == 0 {
		t.Fatal("no server certificate")
	}
	return st.PeerCertificates[0].SerialNumber
}

func fileSerial(t *testing.T, certFile, keyFile string) *big.Int {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return pair.Leaf.SerialNumber
}

// TestCertificateRotation: certificates replaced on disk, in place or by
// renaming new files over the old ones, are served to new connections
// once the reload interval has passed; a connection made before keeps
// working.
func TestCertificateRotation(t *testing.T) {
	p := certs.New(t)
	cluster := testkit.Cluster(t, 1)
	px := kproxytest.Start(t, testkit.Config{Upstream: cluster.ListenAddrs(), ListenerKeys: serverTLS(p, false)}.YAML())
	trust := clientTLS(t, p, false)

	first := fileSerial(t, p.ServerCert, p.ServerKey)
	old, err := dialRawTLS(t, px.BootstrapAddr(), trust)
	if err != nil {
		t.Fatal(err)
	}
	if got := servedSerial(t, old); got.Cmp(first) != 0 {
		t.Fatalf("served serial %x, want the configured %x", got, first)
	}
	if _, err := old.APIVersions(); err != nil {
		t.Fatal(err)
	}

	// In place: the files are rewritten.
	if _, _, err := p.CA.WriteLeaf(p.Dir, "server", testpki.ServerLeaf()); err != nil {
		t.Fatal(err)
	}
	second := fileSerial(t, p.ServerCert, p.ServerKey)
	time.Sleep(tlsconfig.DefaultCheckInterval + 200*time.Millisecond)
	c2, err := dialRawTLS(t, px.BootstrapAddr(), trust)
	if err != nil {
		t.Fatal(err)
	}
	if got := servedSerial(t, c2); got.Cmp(second) != 0 {
		t.Fatalf("after rewriting the files: served serial %x, want the new %x (old %x)", got, second, first)
	}
	if _, err := c2.APIVersions(); err != nil {
		t.Fatal(err)
	}
	if _, err := old.APIVersions(); err != nil {
		t.Fatalf("the connection made before the rotation: %v", err)
	}

	// Atomically: new files renamed over the old ones (as a Kubernetes
	// secret update or certbot's deploy hook does).
	staging := t.TempDir()
	newCert, newKey, err := p.CA.WriteLeaf(staging, "server", testpki.ServerLeaf())
	if err != nil {
		t.Fatal(err)
	}
	third := fileSerial(t, newCert, newKey)
	for _, mv := range [][2]string{{newKey, p.ServerKey}, {newCert, p.ServerCert}} {
		if err := os.Rename(mv[0], mv[1]); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(tlsconfig.DefaultCheckInterval + 200*time.Millisecond)
	c3, err := dialRawTLS(t, px.BootstrapAddr(), trust)
	if err != nil {
		t.Fatal(err)
	}
	if got := servedSerial(t, c3); got.Cmp(third) != 0 {
		t.Fatalf("after renaming new files in: served serial %x, want %x", got, third)
	}
	for i, c := range []*rawConn{old, c2, c3} {
		if _, err := c.APIVersions(); err != nil {
			t.Errorf("connection %d after the second rotation: %v", i+1, err)
		}
	}
}

// TestPassthroughLogsUser: in passthrough mode kproxy logs the user each
// client authenticates upstream as (SCRAM and PLAIN), and never the
// password.
func TestPassthroughLogsUser(t *testing.T) {
	p := certs.New(t)
	cluster := secureUpstream(t, p, kfake.Superuser("PLAIN", "plain-user", "plain-secret"))
	logs := &logbuf.Buffer{}
	px := kproxytest.Start(t, proxyYAML(t, p, cluster.ListenAddrs(), "none", "passthrough"), kproxytest.WithLog(logs, zerolog.DebugLevel))
	ctx := testkit.Context(t, 30*time.Second)

	for _, tc := range []struct {
		user, mechanism string
		opt             kgo.Opt
	}{
		{"kproxy-svc", "SCRAM-SHA-256", kgo.SASL(scram.Auth{User: "kproxy-svc", Pass: "upstream-secret"}.AsSha256Mechanism())},
		{"plain-user", "PLAIN", kgo.SASL(plain.Auth{User: "plain-user", Pass: "plain-secret"}.AsMechanism())},
	} {
		cl := newClient(t, kgo.SeedBrokers(px.BootstrapAddr()), kgo.DialTLSConfig(clientTLS(t, p, false)), tc.opt, kgo.RequestRetries(1))
		if err := cl.Ping(ctx); err != nil {
			t.Fatalf("%s through passthrough: %v", tc.mechanism, err)
		}
		want := fmt.Sprintf(`"user":%q`, tc.user)
		var line string
		waitFor(5*time.Second, func() bool {
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, want) && strings.Contains(l, "passthrough SASL") && strings.Contains(l, `"mechanism":"`+tc.mechanism+`"`) {
					line = l
					return true
				}
			}
			return false
		})
		if line == "" {
			t.Errorf("no passthrough log line with %s and mechanism %s in:\n%s", want, tc.mechanism, logs.String())
		}
		cl.Close()
	}
	for _, secret := range []string{"upstream-secret", "plain-secret"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("kproxy logged the password %q", secret)
		}
	}
}

// TestClientCARotationAndResumption: replacing client_ca_file on disk
// changes who gets in for new connections, and a client that still holds
// a TLS session ticket from before cannot resume its way past the change.
func TestClientCARotationAndResumption(t *testing.T) {
	p := certs.New(t)
	cluster := testkit.Cluster(t, 1)
	px := kproxytest.Start(t, testkit.Config{Upstream: cluster.ListenAddrs(), ListenerKeys: serverTLS(p, true),
		Log: "{level: error}"}.YAML())
	addr := px.BootstrapAddr()
	client := clientTLS(t, p, true)
	client.ClientSessionCache = tls.NewLRUClientSessionCache(8)

	// Resumption works while nothing changes (so the check below means
	// something). The ticket arrives after the handshake: read once.
	for i, wantResumed := range []bool{false, true} {
		c, err := dialRawTLS(t, addr, client)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.APIVersions(); err != nil {
			t.Fatal(err)
		}
		if got := c.Conn.(*tls.Conn).ConnectionState().DidResume; got != wantResumed {
			t.Fatalf("connection %d: resumed %v, want %v", i+1, got, wantResumed)
		}
		c.Close()
	}

	// Trust another CA only.
	other, err := testpki.NewCA("another-ca")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.CAFile, other.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(tlsconfig.DefaultCheckInterval + 200*time.Millisecond)
	c, err := dialRawTLS(t, addr, client)
	if err == nil {
		_, err = c.APIVersions()
	}
	if err == nil {
		t.Fatalf("a client of the dropped CA got in after client_ca_file changed (resumed: %v)", c.Conn.(*tls.Conn).ConnectionState().DidResume)
	}
	// A certificate from the new CA is accepted.
	certFile, keyFile, err := other.WriteLeaf(p.Dir, "other-client", testpki.ClientLeaf())
	if err != nil {
		t.Fatal(err)
	}
	otherTLS, err := tlsconfig.ClientConfig(p.CAFile, "", certFile, keyFile, false)
	if err != nil {
		t.Fatal(err)
	}
	// The server certificate is still from the first CA.
	otherTLS.RootCAs = x509.NewCertPool()
	otherTLS.RootCAs.AddCert(p.CA.Cert)
	oc, err := dialRawTLS(t, addr, otherTLS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oc.APIVersions(); err != nil {
		t.Fatalf("a client of the new CA: %v", err)
	}
}
