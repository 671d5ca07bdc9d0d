package e2e

import (
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/tcppeer"
)

// TestLongPollDoesNotDelayOthers: a consumer long-polling an empty topic
// (fetch max wait 5s) on one connection does not slow down a produce round
// trip of another client to the same broker.
func TestLongPollDoesNotDelayOthers(t *testing.T) {
	t.Parallel()
	const (
		idle    = "idle"
		busy    = "busy"
		maxWait = 5 * time.Second
	)
	ctx := testkit.Context(t, 60*time.Second)
	e := newEnv(t, "")
	e.createTopic(ctx, idle, 1)
	e.createTopic(ctx, busy, 1)
	// Both partitions on one broker, so both clients talk to the same
	// kproxy listener and the same upstream broker.
	node := e.cluster.LeaderFor(idle, 0)
	if err := e.cluster.MoveTopicPartition(busy, 0, node); err != nil {
		t.Fatal(err)
	}

	// The producer is connected and warmed up (metadata, producer id)
	// before the long poll starts, so what is measured is one round trip.
	producer := e.client(kgo.DefaultProduceTopic(busy))
	if err := producer.ProduceSync(ctx, &kgo.Record{Value: []byte("warm-up")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}

	pollSniff := testkit.NewSniffer()
	poller, err := kgo.NewClient(
		kgo.SeedBrokers(e.proxy.BootstrapAddr()),
		kgo.Dialer(pollSniff.Dial),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{idle: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchMaxWait(maxWait),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer poller.Close()
	pctx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	go func() {
		for pctx.Err() == nil {
			poller.PollFetches(pctx)
		}
	}()
	// Wait until a fetch is on the wire, unanswered.
	for pollSniff.Requests(int16(kmsg.Fetch)) == 0 {
		if ctx.Err() != nil {
			t.Fatal("poller never fetched")
		}
		time.Sleep(5 * time.Millisecond)
	}
	fetchSent := time.Now()

	warm := len(e.sniff.Latencies(int16(kmsg.Produce)))
	var worst time.Duration
	for i := range 20 {
		start := time.Now()
		if err := producer.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
		worst = max(worst, time.Since(start))
	}
	if pollSniff.Responses(int16(kmsg.Fetch)) != 0 && time.Since(fetchSent) < maxWait-time.Second {
		t.Fatalf("the fetch was answered early: there was no long poll to be delayed by")
	}
	// The producer's latencies as the sniffer measured them on the wire.
	lat := e.sniff.Latencies(int16(kmsg.Produce))[warm:]
	slices.Sort(lat)
	t.Logf("produce round trips while a %v long poll was pending: worst %v, wire max %v", maxWait, worst, lat[len(lat)-1])
	if worst > maxWait/3 {
		t.Errorf("a produce took %v while another connection long-polled: kproxy serialized them", worst)
	}

	// The long poll itself is answered once its wait expires.
	for pollSniff.Responses(int16(kmsg.Fetch)) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the long poll was never answered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	fl := pollSniff.Latencies(int16(kmsg.Fetch))
	if fl[0] < maxWait-time.Second {
		t.Errorf("first fetch answered after %v; the test relies on a %v long poll", fl[0], maxWait)
	}
	t.Logf("first fetch answered after %v", fl[0])
}

// TestUpstreamUnreachable: a kproxy whose only bootstrap server cannot be
// reached answers a connecting client at once or within the dial timeout,
// never with a hang. When the server refuses connections kproxy knows at
// once, and its bootstrap port refuses them too, as a dead cluster's
// would. When connection attempts go unanswered, a client that connects
// meanwhile gets a clean close (EOF) after the dial timeout; from then on
// the server is known down and the port refuses.
func TestUpstreamUnreachable(t *testing.T) {
	t.Parallel()
	const dialTimeout = 2 * time.Second
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		refusing, _ := tcppeer.Refusing(t)
		p := kproxytest.Start(t, testkit.Config{Upstream: []string{refusing}, DialTimeout: dialTimeout}.YAML(), kproxytest.Unready())
		var err error
		for deadline := time.Now().Add(5 * time.Second); !errors.Is(err, syscall.ECONNREFUSED); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("bootstrap port with its only server refusing: %v, want connection refused", err)
			}
			_, err = apiVersionsAt(p.BootstrapAddr())
		}
		clientFailsFast(t, p, dialTimeout)
	})
	t.Run("unanswered", func(t *testing.T) {
		t.Parallel()
		p := kproxytest.Start(t, testkit.Config{Upstream: []string{blackhole(t)}, DialTimeout: dialTimeout}.YAML(), kproxytest.Unready())
		took := closedAfterFirstRequest(t, p, dialTimeout)
		if took < dialTimeout*3/4 || took > dialTimeout+1500*time.Millisecond {
			t.Errorf("close took %v, want about the %v dial timeout", took, dialTimeout)
		}
		clientFailsFast(t, p, dialTimeout)
	})
}

// closedAfterFirstRequest connects to p's bootstrap port, whose upstream
// cannot be reached, and returns how long its first request took to end in
// a close.
func closedAfterFirstRequest(t *testing.T, p *kproxytest.Kproxy, dialTimeout time.Duration) time.Duration {
	if p.Ready() {
		t.Fatalf("kproxy ready with no reachable upstream")
	}
	c := dialRaw(t, p.BootstrapAddr())
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(3)
	f, _ := c.Frame(req)
	if _, err := c.Write(f); err != nil {
		t.Fatalf("write: %v", err)
	}
	took := expectClosed(t, c, dialTimeout+3*time.Second)
	t.Logf("closed after %v", took)
	if n := testkit.MetricValue(t, p.Registry, "kproxy_connections_closed_total", "reason", "upstream_unreachable"); n != 1 {
		t.Errorf("kproxy_connections_closed_total{reason=upstream_unreachable} = %v, want 1", n)
	}
	return took
}

// clientFailsFast: a kgo client of p, whose upstream cannot be reached,
// gets an error, not a hang, and kproxy is not ready.
func clientFailsFast(t *testing.T, p *kproxytest.Kproxy, dialTimeout time.Duration) {
	if n := testkit.MetricValue(t, p.Registry, "kproxy_ready"); n != 0 {
		t.Errorf("kproxy_ready = %v with no upstream", n)
	}
	// A kgo client gets an error, not a hang.
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.BootstrapAddr()), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout+5*time.Second)
	defer cancel()
	start := time.Now()
	if err := cl.Ping(ctx); err == nil {
		t.Errorf("ping through kproxy with no upstream succeeded")
	} else if ctx.Err() != nil {
		t.Errorf("ping hung until the context expired: %v", err)
	} else {
		t.Logf("ping failed after %v: %v", time.Since(start), err)
	}
}

// blackhole returns the address of a listener whose accept queue is full,
// so that new connection attempts to it go unanswered until they time out.
func blackhole(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil { // never accepted
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	// Fill the queue until a connection attempt hangs.
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return addr
		}
		t.Cleanup(func() { c.Close() })
		if i > 16 {
			t.Skip("cannot fill a listen queue on this system")
		}
	}
}
