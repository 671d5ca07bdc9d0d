package e2esni

import (
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// TestBothListenerKinds runs plaintext port-per-broker and the SNI
// listener in one kproxy: each client only ever learns the addresses of
// the listener it came in on.
func TestBothListenerKinds(t *testing.T) {
	t.Parallel()
	const topic = "sni-both"
	ctx := testkit.Context(t, 30*time.Second)
	cluster := testkit.Cluster(t, 3)
	p := newPKI(t)
	px := kproxytest.Start(t, sniYAML(cluster, p, yamlOpts{}))

	plainSniffer, sniSniffer := testkit.NewSniffer(), testkit.NewSniffer()
	plain := testkit.Client(t, kgo.SeedBrokers(px.BootstrapAddr()), kgo.Dialer(plainSniffer.Dial),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	overSNI := sniClient(t, px, clientTLS(p), sniSniffer, kgo.RecordPartitioner(kgo.ManualPartitioner()))

	createTopic(ctx, t, plain, topic, 3)
	produceSync(ctx, t, plain, topic, "plain", 30, 3)
	produceSync(ctx, t, overSNI, topic, "sni", 30, 3)
	for _, group := range []string{"g-plain", "g-sni"} {
		var cl *kgo.Client
		opts := []kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
		if group == "g-plain" {
			cl = testkit.Client(t, append(opts, kgo.SeedBrokers(px.BootstrapAddr()), kgo.Dialer(plainSniffer.Dial))...)
		} else {
			cl = sniClient(t, px, clientTLS(p), sniSniffer, opts...)
		}
		consumeAll(ctx, t, cl, 60)
	}

	plainSniffer.CheckAddrs(t, px, cluster.ListenAddrs())
	checkSNIAddrs(t, sniSniffer, sniPort(t, px))
}

// TestSNIBehindProxyProtocol: a PROXY header before the TLS ClientHello
// gives the SNI connection the balancer's client address.
func TestSNIBehindProxyProtocol(t *testing.T) {
	t.Parallel()
	cluster := testkit.Cluster(t, 3)
	p := newPKI(t)
	logs := &logbuf.Buffer{}
	px := kproxytest.Start(t, sniYAML(cluster, p, yamlOpts{
		listeners: "  proxy_protocol: {mode: required, trusted_cidrs: [127.0.0.0/8]}",
	}), kproxytest.WithLog(logs, zerolog.DebugLevel))

	raw, err := net.DialTimeout("tcp", px.SNIAddr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Write([]byte("PROXY TCP4 192.0.2.9 127.0.0.1 40123 9094\r\n")); err != nil {
		t.Fatal(err)
	}
	cfg := clientTLS(p)
	cfg.ServerName = "broker-1." + domain
	tc := tls.Client(raw, cfg)
	tc.SetDeadline(time.Now().Add(5 * time.Second))
	if err := tc.Handshake(); err != nil {
		t.Fatalf("TLS after a PROXY header: %v", err)
	}
	tc.Close()
	if !waitFor(5*time.Second, func() bool {
		for _, l := range logs.Lines(t) {
			if l["listener"] == "sni" && l["client"] == "192.0.2.9:40123" && l["message"] == "connection closed" {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no SNI connection from the PROXY header's address 192.0.2.9:40123 logged:\n%s", lastLines(logs.String(), 20))
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
