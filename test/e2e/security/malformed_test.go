package e2esecurity

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// requestHeader encodes a request header; flexible headers end with the
// given raw tagged-fields bytes (a zero count when nil).
func requestHeader(key, version int16, corr int32, clientID string, flexible bool, tags []byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, uint16(len(clientID)))
	b = append(b, clientID...)
	if flexible {
		if tags == nil {
			tags = []byte{0}
		}
		b = append(b, tags...)
	}
	return b
}

// sized prefixes body with its length.
func sized(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func heapInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// raiseNoFile lifts the soft RLIMIT_NOFILE to at least n (up to the hard
// limit) for the test binary, which holds both ends of every connection.
func raiseNoFile(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= n {
		return
	}
	old := lim
	lim.Cur = min(n, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
	if lim.Cur < n {
		t.Skipf("RLIMIT_NOFILE hard limit %d is below the %d this test needs", lim.Max, n)
	}
}

// steadyClient produces and consumes through kproxy for as long as the
// malformed input goes on, recording any failure.
type steadyClient struct {
	produced, consumed atomic.Int64
	mu                 sync.Mutex
	errs               []error
	stop               chan struct{}
	// producerDone is closed when the producer has stopped: its last
	// produce has its answer.
	producerDone chan struct{}
	wg           sync.WaitGroup
	// stopAndCheck stops the client and fails t for anything that went
	// wrong while it ran.
	stopAndCheck func(t *testing.T)
}

func (s *steadyClient) fail(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}

func startSteadyClient(t *testing.T, bootstrap, topic string) *steadyClient {
	s := &steadyClient{stop: make(chan struct{}), producerDone: make(chan struct{})}
	producer := newClient(t, kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic(topic), kgo.ClientID("steady-producer"))
	consumer := newClient(t, kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic), kgo.ClientID("steady-consumer"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		defer close(s.producerDone)
		for i := 0; ; i++ {
			select {
			case <-s.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
			err := producer.ProduceSync(pctx, &kgo.Record{Value: fmt.Appendf(nil, "steady-%d", i)}).FirstErr()
			pcancel()
			if err != nil {
				s.fail(fmt.Errorf("produce %d: %w", i, err))
				continue
			}
			s.produced.Add(1)
		}
	}()
	go func() {
		defer s.wg.Done()
		for ctx.Err() == nil {
			fs := consumer.PollFetches(ctx)
			fs.EachError(func(topic string, p int32, err error) {
				if ctx.Err() == nil {
					s.fail(fmt.Errorf("consume %s/%d: %w", topic, p, err))
				}
			})
			s.consumed.Add(int64(fs.NumRecords()))
		}
	}()
	t.Cleanup(func() {
		select {
		case <-s.stop:
		default:
			close(s.stop)
		}
		cancel()
		s.wg.Wait()
	})
	s.stopAndCheck = func(t *testing.T) {
		t.Helper()
		close(s.stop)
		// A produce under way when told to stop finishes first (within its
		// 10 s timeout): cancelling it would be this test's failure, not
		// kproxy's. Then the consumer catches up with everything produced.
		<-s.producerDone
		want := s.produced.Load()
		if !waitFor(15*time.Second, func() bool { return s.consumed.Load() >= want }) {
			t.Errorf("steady consumer got %d of %d records", s.consumed.Load(), want)
		}
		cancel()
		s.wg.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, err := range s.errs {
			t.Errorf("well-behaved client: %v", err)
		}
		if want < 20 {
			t.Errorf("well-behaved client produced only %d records", want)
		}
		t.Logf("well-behaved client: %d records produced and consumed during the malformed input", want)
	}
	return s
}

// TestMalformedInput throws broken frames at a plaintext kproxy while a
// franz-go client produces and consumes through it. kproxy must close
// every bad connection (the client reads EOF or a reset) within a few
// seconds, never allocate what a frame's size claims, keep serving the
// good client, and leave kfake working.
func TestMalformedInput(t *testing.T) {
	const idle = 3 * time.Second
	raiseNoFile(t, 4096)
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "steady"))
	px := kproxytest.Start(t, testkit.Config{Upstream: cluster.ListenAddrs(), Log: "{level: error}",
		Extra: fmt.Sprintf("limits: {idle_timeout: %s}\n", idle)}.YAML())
	addr := px.BootstrapAddr()
	steady := startSteadyClient(t, addr, "steady")
	heapStart := heapInuse()

	// bad sends raw bytes on a new connection and expects kproxy to close
	// it within a few seconds without answering.
	bad := func(t *testing.T, what string, payload []byte, halfClose bool) {
		t.Helper()
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Errorf("%s: %v", what, err)
			return
		}
		defer c.Close()
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		c.Write(payload) // kproxy may close before it has read everything
		if halfClose {
			c.(*net.TCPConn).CloseWrite()
		}
		closedWithin(t, what, c, 0, 3*time.Second)
	}

	t.Run("truncated frame", func(t *testing.T) {
		// Size says 100, 10 bytes follow, then the client half-closes...
		bad(t, "truncated then half-closed", append([]byte{0, 0, 0, 100}, make([]byte, 10)...), true)
		// ...or goes quiet (closed by the idle timeout)...
		c := dialRaw(t, addr)
		c.Write(append([]byte{0, 0, 0, 100}, requestHeader(18, 3, 1, "x", true, nil)...))
		closedWithin(t, "truncated then silent", c, idle-500*time.Millisecond, idle+3*time.Second)
		// ...or closes outright: nothing to read, kproxy must simply cope.
		c = dialRaw(t, addr)
		c.Write(append([]byte{0, 0, 0, 100}, make([]byte, 10)...))
		c.Close()
	})

	t.Run("negative length", func(t *testing.T) {
		bad(t, "size -1", []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, false)
		bad(t, "size -2^31", []byte{0x80, 0, 0, 0, 0, 0, 0, 0}, false)
		bad(t, "size 0", []byte{0, 0, 0, 0}, false)
	})

	t.Run("2 GiB length", func(t *testing.T) {
		before := heapInuse()
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// A plausible header after the size, then more data.
				payload := append([]byte{0x7f, 0xff, 0xff, 0xff}, requestHeader(0, 9, int32(i), "big", true, nil)...)
				bad(t, "size 2^31-1", append(payload, make([]byte, 64<<10)...), false)
			}()
		}
		wg.Wait()
		if grew := int64(heapInuse()) - int64(before); grew > 64<<20 {
			t.Errorf("heap in use grew by %d MiB after 50 frames claiming 2 GiB", grew>>20)
		}
	})

	t.Run("unknown API key", func(t *testing.T) {
		bad(t, "API key 30000", sized(append(requestHeader(30000, 0, 1, "x", false, nil), 0, 0, 0, 0)), false)
		bad(t, "API key -1", sized(append(requestHeader(-1, 0, 1, "x", false, nil), 0, 0, 0, 0)), false)
	})

	t.Run("Produce v999", func(t *testing.T) {
		body := append(requestHeader(0, 999, 1, "x", true, nil), make([]byte, 32)...)
		bad(t, "Produce v999", sized(body), false)
		bad(t, "Produce v-1", sized(append(requestHeader(0, -1, 1, "x", false, nil), make([]byte, 32)...)), false)
	})

	t.Run("bad varint in flexible header", func(t *testing.T) {
		tags := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x01}
		bad(t, "Metadata v12 tag count of 6 varint bytes", sized(append(requestHeader(3, 12, 1, "x", true, tags), 0, 0, 0)), false)
		// A tag count the rest of the frame cannot hold.
		bad(t, "Metadata v12 tag count 2^28", sized(requestHeader(3, 12, 1, "x", true, []byte{0x80, 0x80, 0x80, 0x80, 0x01})), false)
		// A client id longer than the frame.
		h := requestHeader(3, 12, 1, "x", true, nil)
		binary.BigEndian.PutUint16(h[8:], 0x7fff)
		bad(t, "client id longer than the frame", sized(h), false)
	})

	t.Run("garbage after a valid header", func(t *testing.T) {
		// kproxy streams Metadata requests unparsed: kfake gets the
		// garbage and answers or closes; either way nothing hangs.
		rng := rand.New(rand.NewPCG(1, 2))
		answered, closed := 0, 0
		for i := range 20 {
			body := make([]byte, 1+rng.IntN(2000))
			for j := range body {
				body[j] = byte(rng.Uint32())
			}
			c := dialRaw(t, addr)
			c.Write(sized(append(requestHeader(3, 12, int32(i), "garbage", true, nil), body...)))
			elapsed, err := testkit.WaitClosed(c, 5*time.Second)
			switch {
			case err == nil:
				closed++
			case errors.Is(err, testkit.ErrNotClosed):
				answered++
			default:
				t.Errorf("garbage %d: neither answered nor closed: %v (after %s)", i, err, elapsed)
			}
			c.Close()
		}
		t.Logf("garbage Metadata bodies: %d answered, %d closed", answered, closed)
		// kfake is still up.
		direct := newClient(t, kgo.SeedBrokers(cluster.ListenAddrs()...))
		if err := direct.Ping(testkit.Context(t, 10*time.Second)); err != nil {
			t.Fatalf("kfake after the garbage: %v", err)
		}
	})

	t.Run("1000 silent connections", func(t *testing.T) {
		before := heapInuse()
		activeBefore := testkit.MetricValue(t, px.Registry, "kproxy_connections_active")
		conns := make([]net.Conn, 0, 1000)
		for range 1000 {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				t.Fatalf("connection %d: %v", len(conns)+1, err)
			}
			conns = append(conns, c)
		}
		t.Cleanup(func() {
			for _, c := range conns {
				c.Close()
			}
		})
		if !waitFor(10*time.Second, func() bool {
			return testkit.MetricValue(t, px.Registry, "kproxy_connections_active") >= activeBefore+1000
		}) {
			t.Errorf("kproxy_connections_active %v, want %v", testkit.MetricValue(t, px.Registry, "kproxy_connections_active"), activeBefore+1000)
		}
		perConn := (int64(heapInuse()) - int64(before)) / 1000
		t.Logf("heap per silent connection: %d KiB", perConn>>10)
		if perConn > 128<<10 {
			t.Errorf("each silent connection holds %d KiB of heap", perConn>>10)
		}
		// The steady client is served meanwhile (checked at the end); each
		// silent connection is closed by the idle timeout.
		var wg sync.WaitGroup
		var notClosed atomic.Int64
		var firstErr atomic.Value
		for _, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := testkit.WaitClosed(c, idle+5*time.Second); err != nil {
					notClosed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}()
		}
		wg.Wait()
		if n := notClosed.Load(); n > 0 {
			t.Errorf("%d of 1000 silent connections not closed by kproxy within idle_timeout + 5s; first: %v", n, firstErr.Load())
		}
	})

	steady.stopAndCheck(t)
	if grew := int64(heapInuse()) - int64(heapStart); grew > 64<<20 {
		t.Errorf("heap in use grew by %d MiB over the whole suite", grew>>20)
	}
	// kproxy is still up for newcomers.
	if _, err := dialRaw(t, addr).APIVersions(); err != nil {
		t.Fatalf("kproxy after the malformed input: %v", err)
	}
	if n := closedTotal(t, px.Registry, "protocol_error"); n < 10 {
		t.Errorf("protocol_error closes %v, want one per malformed frame", n)
	}
}

// TestPassthroughSASLFrameBounded: before authentication a passthrough
// listener reads at most a SASL token's worth per frame, as a broker does
// (sasl.server.max.receive.size): a client that announces a huge
// SaslHandshake or SaslAuthenticate and sends nothing more costs kproxy no
// memory and is closed.
func TestPassthroughSASLFrameBounded(t *testing.T) {
	cluster := testkit.Cluster(t, 1, kfake.EnableSASL(), kfake.Superuser("PLAIN", "svc", "svc-secret"))
	px := kproxytest.Start(t, testkit.Config{Upstream: cluster.ListenAddrs(), ListenerKeys: "sasl: {mode: passthrough}",
		Log: "{level: error}", Extra: "limits: {max_frame_bytes: 16777216}\n"}.YAML())
	addr := px.BootstrapAddr()
	const n = 8
	before := heapInuse()
	conns := make([]net.Conn, 0, 2*n)
	for i := range 2 * n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		key := int16(17) // SaslHandshake v1
		if i%2 == 1 {
			key = 36 // SaslAuthenticate v2 (flexible)
		}
		h := requestHeader(key, map[int16]int16{17: 1, 36: 2}[key], 1, "big-sasl", key == 36, nil)
		prefix := binary.BigEndian.AppendUint32(nil, 16<<20-64)
		// More than kproxy's read buffer, so that the header is parsed.
		if _, err := c.Write(append(append(prefix, h...), make([]byte, 40<<10)...)); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// Wait until kproxy has read every header.
	if !waitFor(5*time.Second, func() bool {
		return testkit.MetricValue(t, px.Registry, "kproxy_requests_total", "api", "SASLHandshake")+
			testkit.MetricValue(t, px.Registry, "kproxy_requests_total", "api", "SASLAuthenticate") >= 2*n
	}) {
		t.Errorf("kproxy parsed %v SASL request headers, want %d", testkit.MetricValue(t, px.Registry, "kproxy_requests_total", "api", "SASLHandshake")+
			testkit.MetricValue(t, px.Registry, "kproxy_requests_total", "api", "SASLAuthenticate"), 2*n)
	}
	time.Sleep(200 * time.Millisecond)
	if grew := int64(heapInuse()) - int64(before); grew > 32<<20 {
		t.Errorf("heap grew by %d MiB for %d unauthenticated connections announcing 16 MiB SASL frames", grew>>20, 2*n)
	}
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			closedWithin(t, fmt.Sprintf("connection %d announcing a 16 MiB SASL frame", i), c, 0, 3*time.Second)
		}()
	}
	wg.Wait()
	// A real passthrough login still works.
	cl := newClient(t, kgo.SeedBrokers(addr), kgo.SASL(plain.Auth{User: "svc", Pass: "svc-secret"}.AsMechanism()))
	if err := cl.Ping(testkit.Context(t, 10*time.Second)); err != nil {
		t.Fatalf("passthrough PLAIN login: %v", err)
	}
}
