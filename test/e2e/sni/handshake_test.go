package e2esni

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

const refusedMsg = "TLS server name routes to no broker; handshake refused"

// TestSNIHandshakeRefused: a connection without SNI, naming an unknown
// host, or naming a node the cluster has not reported fails its handshake,
// each with a structured log line naming the reason and a count in
// kproxy_sni_handshake_refused_total; a known name still connects.
func TestSNIHandshakeRefused(t *testing.T) {
	t.Parallel()
	cluster := testkit.Cluster(t, 3)
	p := newPKI(t)
	logs := &logbuf.Buffer{}
	px := kproxytest.Start(t, sniYAML(cluster, p, yamlOpts{}), kproxytest.WithLog(logs, zerolog.WarnLevel))
	addr := px.SNIAddr()

	for _, tc := range []struct {
		serverName, reason string
	}{
		{"", "no_server_name"},
		{"elsewhere.example.com", "unknown_name"},
		{"broker-01." + domain, "unknown_name"},
		{"broker-99." + domain, "unknown_node"},
	} {
		t.Run(tc.reason+"/"+tc.serverName, func(t *testing.T) {
			before := testkit.MetricValue(t, px.Registry, "kproxy_sni_handshake_refused_total", "reason", tc.reason)
			// InsecureSkipVerify: with no server name Go would refuse to
			// verify; the refusal under test is kproxy's, not the client's.
			conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr,
				&tls.Config{ServerName: tc.serverName, InsecureSkipVerify: true})
			if err == nil {
				conn.Close()
				t.Fatalf("handshake naming %q succeeded; want it refused", tc.serverName)
			}
			if !waitFor(5*time.Second, func() bool {
				return testkit.MetricValue(t, px.Registry, "kproxy_sni_handshake_refused_total", "reason", tc.reason) == before+1
			}) {
				t.Errorf("kproxy_sni_handshake_refused_total{reason=%q} did not count the refusal", tc.reason)
			}
			if !waitFor(5*time.Second, func() bool { return refusalLogged(t, logs, tc.serverName, tc.reason) }) {
				t.Errorf("no %q log line with server_name %q and sni_refusal %q in:\n%s", refusedMsg, tc.serverName, tc.reason, logs)
			}
		})
	}

	// The known names do connect, by the same route.
	for _, name := range []string{bootstrapHost, "broker-2." + domain} {
		cfg := clientTLS(p)
		cfg.ServerName = name
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
		if err != nil {
			t.Fatalf("handshake naming %s: %v", name, err)
		}
		conn.Close()
	}
}

func refusalLogged(t testing.TB, logs *logbuf.Buffer, serverName, reason string) bool {
	for _, l := range logs.Lines(t) {
		if l["message"] == refusedMsg && l["server_name"] == serverName && l["sni_refusal"] == reason && l["listener"] == "sni" {
			return true
		}
	}
	return false
}

// TestSNIMutualTLS: with client_auth require on listeners.sni.tls, a
// client with a certificate of the CA produces and consumes over the one
// port; one without is refused in the handshake.
func TestSNIMutualTLS(t *testing.T) {
	t.Parallel()
	const topic = "sni-mtls"
	ctx := testkit.Context(t, 30*time.Second)
	cluster := testkit.Cluster(t, 3)
	p := newPKI(t)
	mtls := kproxytest.Start(t, sniYAML(cluster, p, yamlOpts{tls: "{cert_file: " + p.ServerCert + ", key_file: " + p.ServerKey +
		", client_auth: require, client_ca_file: " + p.CAFile + ", principal_from: cn}"}))

	withCert := clientTLS(p)
	pair, err := tls.LoadX509KeyPair(p.ClientCert, p.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	withCert.Certificates = []tls.Certificate{pair}
	cl := sniClient(t, mtls, withCert, nil, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	createTopic(ctx, t, cl, topic, 3)
	produceSync(ctx, t, cl, topic, "mtls", 30, 3)
	consumer := sniClient(t, mtls, withCert, nil, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	consumeAll(ctx, t, consumer, 30)

	cfg := clientTLS(p)
	cfg.ServerName = bootstrapHost
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", mtls.SNIAddr(), cfg)
	if err == nil {
		// TLS 1.3: the server's refusal arrives with the first read.
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		conn.Close()
	}
	if err == nil {
		t.Fatal("a client without a certificate was served on a client_auth require SNI listener")
	}
	t.Logf("without a certificate: %v", err)
}
