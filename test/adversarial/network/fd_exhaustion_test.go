package network

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testpki"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// fdLimit is kproxy's open-files limit in the exhaustion test: room for
// its own descriptors (listeners, the upstream's, the log) and a few
// dozen clients.
const fdLimit = 64

// A peer opens more idle connections than kproxy has file descriptors:
// accept fails with EMFILE. As Kafka's acceptor and net/http's server do,
// every listener (bootstrap, a broker's port, the SNI port, the admin endpoint) backs
// off and accepts again once descriptors are free: clients that waited in
// the backlog meanwhile are served, and each listener's errors are logged
// and counted.
func TestFileDescriptorExhaustionDoesNotStopListeners(t *testing.T) {
	// No metadata refresh is due while descriptors are out, so each dial
	// here is a client's. A client accepted the moment one descriptor is
	// free needs another for its upstream: that dial waits for it, and
	// marks nothing down.
	pki := certs.NewWithServer(t, testpki.Leaf{CommonName: "*." + sniDomain, DNSNames: []string{"*." + sniDomain}, Server: true})
	sniPort := testkit.FreePort(t)
	kp := advkit.StartWithNoFile(t, testkit.Config{Upstream: advkit.Kfake(t, 1), UpstreamKeys: "metadata_refresh: 1h",
		ListenerKeys: sniListener(sniPort, pki), Admin: true, Log: "{level: info}", Extra: "limits: {idle_timeout: 10m}\n"}.YAML(), fdLimit)

	// A broker's port, learned before the attack.
	meta := testkit.DialRaw(t, kp.Bootstrap, "network-fd").MustRoundTrip(t, kmsg.NewPtrMetadataRequest()).(*kmsg.MetadataResponse)
	if len(meta.Brokers) != 1 {
		t.Fatalf("Metadata: %d brokers, want 1", len(meta.Brokers))
	}
	b := meta.Brokers[0]
	broker, brokerListener := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))), "node-"+strconv.Itoa(int(b.NodeID))

	// More idle connections than kproxy has descriptors: the rest wait
	// in the bootstrap port's backlog.
	flood := make([]net.Conn, 0, fdLimit+16)
	for range fdLimit + 16 {
		c, err := net.DialTimeout("tcp", kp.Bootstrap, 10*time.Second)
		if err != nil {
			t.Fatalf("dial the bootstrap port: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		flood = append(flood, c)
	}
	fdWaitAcceptError(t, kp, "bootstrap")

	// While descriptors are out, a client of the broker's port and one of
	// the admin endpoint wait in their backlogs.
	waiting, err := net.DialTimeout("tcp", broker, 10*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", broker, err)
	}
	defer waiting.Close()
	waitingRaw := &testkit.RawConn{Conn: waiting, ClientID: "network-fd-waiting"}
	corr, err := waitingRaw.Send(kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		t.Fatalf("write to %s while kproxy is out of descriptors: %v", broker, err)
	}
	fdWaitAcceptError(t, kp, brokerListener)
	admin := make(chan error, 1)
	go func() {
		client := http.Client{Timeout: 60 * time.Second}
		resp, err := client.Get("http://" + kp.Admin + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %s", resp.Status)
			}
		}
		admin <- err
	}()
	fdWaitAcceptError(t, kp, "admin")
	sniDone := make(chan error, 1)
	go func() {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 60 * time.Second}, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(sniPort)),
			&tls.Config{ServerName: sniBootstrap, RootCAs: pki.Pool(), MinVersion: tls.VersionTLS12})
		if err == nil {
			c.SetDeadline(time.Now().Add(60 * time.Second))
			_, err = (&testkit.RawConn{Conn: c, ClientID: "network-fd-sni"}).RoundTrip(kmsg.NewPtrApiVersionsRequest())
			c.Close()
		}
		sniDone <- err
	}()
	fdWaitAcceptError(t, kp, "sni")

	// The peer lets go: every listener accepts again.
	for _, c := range flood {
		c.Close()
	}
	waiting.SetDeadline(time.Now().Add(30 * time.Second))
	if _, _, err := waitingRaw.Receive(kmsg.NewPtrApiVersionsRequest(), corr); err != nil {
		t.Fatalf("the client that waited on %s once descriptors were free: %v", brokerListener, err)
	}
	select {
	case err := <-admin:
		if err != nil {
			t.Fatalf("the admin request that waited once descriptors were free: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the admin request that waited got no answer within 60s of descriptors being free")
	}
	select {
	case err := <-sniDone:
		if err != nil {
			t.Fatalf("the SNI client that waited, once descriptors were free: %v", err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("the SNI client that waited got no answer within 90s")
	}
	again := testkit.DialRaw(t, kp.Bootstrap, "network-fd-after")
	again.SetDeadline(time.Now().Add(30 * time.Second))
	if resp := again.MustRoundTrip(t, kmsg.NewPtrMetadataRequest()).(*kmsg.MetadataResponse); len(resp.Brokers) != 1 {
		t.Fatalf("Metadata after the attack: %d brokers, want 1", len(resp.Brokers))
	}
	for _, l := range []string{"bootstrap", brokerListener, "sni", "admin"} {
		series := fmt.Sprintf(`kproxy_accept_errors_total{listener=%q,reason="emfile"}`, l)
		if v, ok := networkMetric(t, kp.Admin, series); !ok || v < 1 {
			t.Errorf("%s = %v (present %v), want at least 1", series, v, ok)
		}
	}
}

// fdWaitAcceptError waits for the log line of listener's accept failing
// for want of descriptors.
func fdWaitAcceptError(t *testing.T, kp *testkit.Binary, listener string) {
	t.Helper()
	l := kp.WaitLog("accept failing on "+listener, func(l testkit.LogLine) bool {
		return strings.HasPrefix(l.Message(), "accept failed") && l["listener"] == listener
	})
	if l.Message() != "accept failed; retrying" || l["reason"] != "emfile" || l["level"] != "warn" || l["retry_in"] == nil {
		t.Errorf("accept error line %v: want \"accept failed; retrying\" at warn, reason emfile and retry_in", map[string]any(l))
	}
}
