package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/protocol"
)

// TestDeadNodeNoDialStorm runs the real kproxy binary in front of a
// 3-node cluster and stops node 2. A client that reconnects at once after
// every close hammers node 2's kproxy port for a few seconds, as
// kafka-python did (3,682 connections in 7 s, each one an upstream dial
// and a warning). kproxy must dial the dead node only at its backoff rate,
// refuse the client's connections as the dead broker's own port would
// (so clients back off), log one warning, and, once the node is back,
// serve it again within the longest backoff and say so once.
func TestDeadNodeNoDialStorm(t *testing.T) {
	bin := testkit.KproxyBinary(t)
	t.Parallel()
	const (
		stopped    = int32(2)
		stormFor   = 4 * time.Second
		maxBackoff = 2 * time.Second // the default upstream.reconnect_backoff_max
	)
	ctx := testkit.Context(t, 2*time.Minute)
	cluster := testkit.Cluster(t, 3)
	upstreamPort := brokerPort(ctx, t, cluster.ListenAddrs(), stopped)

	cfg := testkit.Config{Upstream: cluster.ListenAddrs(), DialTimeout: 2 * time.Second, Admin: true, Log: "{level: info, format: json}"}.YAML()
	kp := testkit.RunBinary(t, bin, testkit.WriteConfig(t, cfg))
	kp.WaitReady()
	logs := tapLogs(t, kp)
	proxyAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(brokerPort(ctx, t, []string{kp.Bootstrap}, stopped)))
	if _, err := apiVersionsAt(proxyAddr); err != nil {
		t.Fatalf("node %d through kproxy before the stop: %v", stopped, err)
	}

	healthyAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(brokerPort(ctx, t, []string{kp.Bootstrap}, 0)))
	if err := cluster.RemoveNode(stopped); err != nil {
		t.Fatal(err)
	}
	mark := logs.len()
	failures := fmt.Sprintf(`kproxy_upstream_dial_failures_total{node_id="%d"}`, stopped)
	dials0, _ := testkit.ScrapeSeries(t, kp.Admin, failures) // absent: none yet
	accepted, refused := reconnectStorm(t, proxyAddr, stormFor)
	dialErrors, _ := testkit.ScrapeSeries(t, kp.Admin, failures)
	dialErrors -= dials0
	warns := logs.since(mark, func(l testkit.LogLine) bool { return l["level"] == "warn" })
	t.Logf("%s of reconnecting: %d connections accepted, %d refused; %.0f upstream dial errors; %d warnings",
		stormFor, accepted, refused, dialErrors, len(warns))

	// The bootstrap listener and a healthy node's listener still serve.
	for _, a := range []string{kp.Bootstrap, healthyAddr} {
		if _, err := apiVersionsAt(a); err != nil {
			t.Errorf("%s while node %d is down: %v", a, stopped, err)
		}
	}
	// Probes after 0.1, 0.3, 0.7, 1.5, 3.1 s (±20%) plus the first
	// client's failed dial: 7 leaves room for one more.
	if dialErrors < 2 || dialErrors > 7 {
		t.Errorf("%.0f failed upstream dials to the stopped node in %s, want its backoff rate (2..7)", dialErrors, stormFor)
	}
	_, metrics := testkit.HTTPGet(t, "http://"+kp.Admin+"/metrics")
	if want := fmt.Sprintf("kproxy_upstream_dial_failures_total{node_id=\"%d\"}", stopped); !strings.Contains(metrics, want) {
		t.Errorf("/metrics has no %s", want)
	}
	_, brokers := testkit.HTTPGet(t, "http://"+kp.Admin+"/brokers")
	if !strings.Contains(brokers, `"last_error": "dial upstream`) {
		t.Errorf("/brokers names no last error for the stopped node:\n%s", brokers)
	}
	if accepted > 3 || refused == 0 {
		t.Errorf("%d connections accepted, %d refused: want the stopped node's port to refuse them, as a dead broker's does",
			accepted, refused)
	}
	if len(warns) != 1 || warns[0]["node_id"] != float64(stopped) || !strings.HasPrefix(warns[0].Message(), "upstream unreachable") {
		t.Errorf("%d warnings while node %d was down (first: %v), want one that names the node", len(warns), stopped, warns[:min(len(warns), 2)])
	}

	// The node comes back on its port.
	if _, _, err := cluster.AddNode(stopped, upstreamPort); err != nil {
		t.Fatalf("restart node %d on port %d: %v", stopped, upstreamPort, err)
	}
	back := time.Now()
	for {
		_, err := apiVersionsAt(proxyAddr)
		if err == nil {
			break
		}
		if time.Since(back) > 10*time.Second {
			t.Fatalf("node %d back for 10s, kproxy still does not serve it: %v", stopped, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(back)
	t.Logf("served again %s after the node came back", took.Round(time.Millisecond))
	if limit := maxBackoff*12/10 + time.Second; took > limit { // + slack for a loaded machine
		t.Errorf("served again after %s, want within the longest backoff (%s)", took, limit)
	}
	var up []testkit.LogLine
	for deadline := time.Now().Add(2 * time.Second); len(up) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		up = logs.since(mark, func(l testkit.LogLine) bool { return l.Message() == "upstream reachable again" })
	}
	if len(up) != 1 || up[0]["node_id"] != float64(stopped) {
		t.Fatalf("recovery lines %v, want one naming node %d", up, stopped)
	}
	if d, err := time.ParseDuration(fmt.Sprint(up[0]["downtime"])); err != nil || d < stormFor {
		t.Errorf("recovery line downtime %v: want a duration with its unit, at least %s", up[0]["downtime"], stormFor)
	}
	// Over the whole outage: the one warning, and at most a summary per 10s.
	others := logs.since(mark, func(l testkit.LogLine) bool {
		return l["level"] == "warn" && l.Message() != "upstream still unreachable"
	})
	if len(others) != 1 {
		t.Errorf("%d warnings other than the summaries over the whole outage, want 1", len(others))
	}
}

// brokerPort asks the cluster behind seeds (directly or through kproxy)
// for node's port.
func brokerPort(ctx context.Context, t *testing.T, seeds []string, node int32) int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		t.Fatalf("metadata from %v: %v", seeds, err)
	}
	for _, b := range md.Brokers {
		if b.NodeID == node {
			return int(b.Port)
		}
	}
	t.Fatalf("metadata from %v names no node %d: %v", seeds, node, md.Brokers)
	return 0
}

// apiVersionsFrame is an ApiVersions v3 request.
func apiVersionsFrame() []byte {
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(3)
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kproxy-e2e", "1.0"
	return protocol.AppendRequestFrame(nil, protocol.RequestHeader{CorrelationID: 1, ClientID: "e2e-storm"}, req)
}

// apiVersionsAt connects to addr, sends ApiVersions and reads the response.
func apiVersionsAt(addr string) ([]byte, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(apiVersionsFrame()); err != nil {
		return nil, err
	}
	return testkit.ReadFrame(c)
}

// reconnectStorm connects to addr over and over for d, like a client that
// retries at once after a connection closes: it sends ApiVersions, reads
// until kproxy closes the connection, and connects again. It returns how
// many connections were accepted and how many refused.
func reconnectStorm(t *testing.T, addr string, d time.Duration) (accepted, refused int) {
	t.Helper()
	frame := apiVersionsFrame()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Fatalf("connect %s: %v, want success or a refusal", addr, err)
			}
			refused++
			time.Sleep(time.Millisecond) // spare the shared CPU, not kproxy
			continue
		}
		accepted++
		c.SetDeadline(time.Now().Add(3 * time.Second))
		c.Write(frame)
		io.Copy(io.Discard, c)
		c.Close()
	}
	return accepted, refused
}

// logTap keeps every line a kproxy binary logs, read as it is written so
// that a flood of lines cannot block kproxy on a full pipe.
type logTap struct {
	mu    sync.Mutex
	lines []testkit.LogLine
}

func tapLogs(t *testing.T, kp *testkit.Binary) *logTap {
	lt := &logTap{}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			default:
			}
			l, ok := kp.Next(100 * time.Millisecond)
			if !ok {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			lt.mu.Lock()
			lt.lines = append(lt.lines, l)
			lt.mu.Unlock()
		}
	}()
	t.Cleanup(func() { close(done); <-stopped })
	return lt
}

func (lt *logTap) len() int {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return len(lt.lines)
}

// since returns the lines from index mark on that match accepts.
func (lt *logTap) since(mark int, match func(testkit.LogLine) bool) []testkit.LogLine {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	var out []testkit.LogLine
	for _, l := range lt.lines[mark:] {
		if match(l) {
			out = append(out, l)
		}
	}
	return out
}

// TestBootstrapBlackholeSkipped: the first bootstrap server drops
// connection attempts (a full accept queue on loopback: SYNs go
// unanswered). The first bootstrap connection must not wait
// upstream.dial_timeout for it (the next server is dialed after a short
// head start), and later ones must go straight to the server that answers.
// Once the dial times out, the dropped server is known down.
func TestBootstrapBlackholeSkipped(t *testing.T) {
	t.Parallel()
	const dialTimeout = 3 * time.Second
	cluster := testkit.Cluster(t, 1)
	p := kproxytest.Start(t, testkit.Config{Upstream: append([]string{blackhole(t)}, cluster.ListenAddrs()...), DialTimeout: dialTimeout}.YAML(), kproxytest.Unready())
	for i := range 5 {
		start := time.Now()
		c := dialRaw(t, p.BootstrapAddr())
		c.Versions(t)
		c.Close()
		took := time.Since(start)
		t.Logf("bootstrap connection %d answered in %s", i+1, took.Round(time.Millisecond))
		limit := 200 * time.Millisecond
		if i == 0 {
			limit = time.Second // the head start (250ms) and a dial
		}
		if took > limit {
			t.Errorf("bootstrap connection %d took %s, want under %s (dial timeout %s)", i+1, took, limit, dialTimeout)
		}
	}
	for deadline := time.Now().Add(dialTimeout + 2*time.Second); testkit.MetricValue(t, p.Registry, "kproxy_upstreams_down") != 1; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("kproxy_upstreams_down = %v after the dial timeout, want the dropped server counted", testkit.MetricValue(t, p.Registry, "kproxy_upstreams_down"))
		}
	}
	start := time.Now()
	c := dialRaw(t, p.BootstrapAddr())
	c.Versions(t)
	if took := time.Since(start); took > 200*time.Millisecond {
		t.Errorf("with the dropped server known down, a bootstrap connection took %s", took)
	}
}
