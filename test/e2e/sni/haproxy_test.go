package e2esni

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// TestSNIBehindHAProxy: HAProxy in TCP mode (deploy/haproxy/haproxy-sni.cfg.tmpl)
// passes TLS through to the SNI listener with a PROXY header; clients
// reach every broker through HAProxy's one port, and are told names at
// that port (listeners.sni.advertised_port).
func TestSNIBehindHAProxy(t *testing.T) {
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy is not installed (apt-get install -y haproxy; .ci/run installs it): skipping")
	}
	t.Parallel()
	const topic = "sni-haproxy"
	ctx := testkit.Context(t, 30*time.Second)
	hport := testkit.FreePort(t)
	cluster := testkit.Cluster(t, 3)
	p := newPKI(t)
	px := kproxytest.Start(t, sniYAML(cluster, p, yamlOpts{
		listeners: "  port_per_broker: false\n  proxy_protocol: {mode: required, trusted_cidrs: [127.0.0.0/8]}",
		sni:       "    advertised_port: " + strconv.Itoa(hport),
	}))
	startHAProxy(t, haproxy, hport, px.SNIAddr())

	sniffer := testkit.NewSniffer()
	cl := sniClientAt(t, hport, clientTLS(p), sniffer, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	createTopic(ctx, t, cl, topic, 3)
	produceSync(ctx, t, cl, topic, "ha", 30, 3)
	consumer := sniClientAt(t, hport, clientTLS(p), sniffer, kgo.ConsumeTopics(topic), kgo.ConsumerGroup("g-ha"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	consumeAll(ctx, t, consumer, 30)
	checkSNIAddrs(t, sniffer, hport)
}

func startHAProxy(t *testing.T, haproxy string, port int, kproxy string) {
	t.Helper()
	tmpl, err := os.ReadFile("../../../deploy/haproxy/haproxy-sni.cfg.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.NewReplacer("@BIND@", "127.0.0.1", "@PORT@", strconv.Itoa(port), "@KPROXY@", kproxy).Replace(string(tmpl))
	log := testkit.RunHAProxy(t, haproxy, cfg)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if !waitFor(10*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	}) {
		t.Fatalf("haproxy did not listen on %s:\n%s", addr, log.String())
	}
}
