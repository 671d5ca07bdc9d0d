package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/testkit/logbuf"
	"github.com/kproxy/kproxy/internal/testkit/tcppeer"
)

// fakeClock is a settable time source for upstreamHealth.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newTestHealth(t *testing.T, set healthSettings) (*upstreamHealth, *logbuf.Buffer) {
	t.Helper()
	logs := &logbuf.Buffer{}
	h := newUpstreamHealth(set, zerolog.New(logs), newServerMetrics(prometheus.NewRegistry(), metricsSettings{}))
	t.Cleanup(h.close)
	return h, logs
}

var errRefused = errors.New("connect: connection refused")

// TestHealthBackoffGrowsAndResets: after each consecutive failure the next
// probe waits backoff·2^(n-1), capped and jittered by ±20%; meanwhile
// every dial is refused without being attempted; a success resets it all.
func TestHealthBackoffGrowsAndResets(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1e9, 0)}
	h, _ := newTestHealth(t, healthSettings{backoff: 100 * time.Millisecond, maxBackoff: 2 * time.Second,
		logEvery: time.Minute, now: clock.Now})
	const addr = "10.0.0.1:9092"
	if err := h.admit(addr); err != nil {
		t.Fatalf("unknown address refused: %v", err)
	}
	want := []time.Duration{100, 200, 400, 800, 1600, 2000, 2000}
	for i, base := range want {
		base *= time.Millisecond
		err := h.record(addr, 1, errRefused)
		if !healthReported(err) || !errors.Is(err, errRefused) {
			t.Fatalf("failure %d: record returned %v, want the dial error marked as reported", i+1, err)
		}
		wait := h.endpoints[addr].retryAt.Sub(clock.Now())
		if lo, hi := time.Duration(float64(base)*0.8), time.Duration(float64(base)*1.2); wait < lo || wait > hi {
			t.Errorf("after failure %d: next probe in %s, want %s..%s", i+1, wait, lo, hi)
		}
		err = h.admit(addr)
		var down *upstreamDownError
		if !errors.As(err, &down) || !healthReported(err) {
			t.Fatalf("after failure %d: admit = %v, want a reported upstreamDownError", i+1, err)
		}
		clock.advance(wait)
	}
	if !h.down(addr) {
		t.Fatal("not down after failures")
	}
	if err := h.record(addr, 1, nil); err != nil {
		t.Fatalf("success: %v", err)
	}
	if h.down(addr) || h.admit(addr) != nil {
		t.Fatal("still down after a successful dial")
	}
	h.record(addr, 1, errRefused)
	if wait := h.endpoints[addr].retryAt.Sub(clock.Now()); wait > 120*time.Millisecond {
		t.Errorf("first failure after a success waits %s: backoff not reset", wait)
	}
	// A cancelled dial says nothing about the upstream, nor does one
	// kproxy had no descriptor (or buffer, or memory) for.
	h.record("10.0.0.2:9092", 2, context.Canceled)
	if h.down("10.0.0.2:9092") {
		t.Error("a cancelled dial marked the upstream down")
	}
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM} {
		err := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", errno)}
		if got := h.record("10.0.0.3:9092", 3, fmt.Errorf("dial upstream: %w", err)); !errors.Is(got, errno) {
			t.Errorf("%v: record returned %v", errno, got)
		}
		if h.down("10.0.0.3:9092") {
			t.Errorf("a dial without %v marked the upstream down", errno)
		}
	}
}

// TestHealthLogsAggregated: a storm of failures and refused connections is
// one warning, then at most one summary per interval counting what it
// stands for, then one info line with the downtime when the upstream is
// back.
func TestHealthLogsAggregated(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1e9, 0)}
	h, logs := newTestHealth(t, healthSettings{backoff: 100 * time.Millisecond, maxBackoff: 2 * time.Second,
		logEvery: 10 * time.Second, now: clock.Now})
	const addr = "10.0.0.1:9092"
	storm := func(n int) {
		for i := range n {
			if i%10 == 0 {
				h.record(addr, 3, errRefused) // a probe
			} else {
				h.admit(addr) // a client connection
			}
			clock.advance(time.Millisecond)
		}
	}
	storm(5000) // 5 s
	lines := logs.Lines(t)
	if len(lines) != 1 || lines[0]["level"] != "warn" || lines[0]["node_id"] != 3.0 || lines[0]["upstream"] != addr {
		t.Fatalf("after 5000 failures in 5s: %d lines %v, want one warning naming node and upstream", len(lines), lines)
	}
	if r, _ := lines[0]["retry_in"].(string); !strings.HasSuffix(r, "ms") {
		t.Errorf("retry_in %v has no unit", lines[0]["retry_in"])
	}
	storm(10000) // 10 s more: one summary
	lines = logs.Lines(t)
	if len(lines) != 2 {
		t.Fatalf("after 15s down: %d lines, want 2: %v", len(lines), lines)
	}
	sum := lines[1]
	if sum["message"] != "upstream still unreachable" || sum["suppressed"].(float64) < 9000 || sum["down_for"] != "10s" {
		t.Errorf("summary line %v: want a count of the ~10000 suppressed events and down_for 10s", sum)
	}
	if sum["connections_refused"].(float64) < 9000 || sum["failed_attempts"].(float64) < 1000 {
		t.Errorf("summary line %v: want the refusals and failed attempts counted", sum)
	}
	clock.advance(1500 * time.Millisecond)
	h.record(addr, 3, nil)
	h.record(addr, 3, nil) // already up: says nothing
	lines = logs.Lines(t)
	if len(lines) != 3 {
		t.Fatalf("after recovery: %d lines, want 3: %v", len(lines), lines)
	}
	if up := lines[2]; up["level"] != "info" || up["message"] != "upstream reachable again" || up["downtime"] != "16.5s" {
		t.Errorf("recovery line %v: want info with downtime 16.5s", up)
	}
}

// TestHealthProbesUntilBack: once an address is down, kproxy itself dials
// it once per backoff interval (no faster, whatever the clients do), tells
// the listeners when it goes down and when a probe finds it back.
func TestHealthProbesUntilBack(t *testing.T) {
	addr, release := tcppeer.Refusing(t) // as a dead broker's port

	var probes atomic.Int32
	var mu sync.Mutex
	var changes []bool
	var h *upstreamHealth
	h, _ = newTestHealth(t, healthSettings{backoff: 20 * time.Millisecond, maxBackoff: 100 * time.Millisecond,
		logEvery: time.Minute,
		probe: func(ctx context.Context, a string, _ int32) error {
			probes.Add(1)
			c, err := (&net.Dialer{}).DialContext(ctx, "tcp", a)
			if err == nil {
				c.Close()
			}
			return err
		},
		changed: func(a string) {
			mu.Lock()
			defer mu.Unlock()
			changes = append(changes, h.down(a))
		}})

	h.record(addr, 0, errRefused)
	start := time.Now()
	for time.Since(start) < time.Second {
		h.admit(addr) // a client storm: never dials
	}
	elapsed := time.Since(start)
	// 20+40+80 ms, then every 100 ms (jitter ±20%): at most ~12 in a second.
	if n := probes.Load(); n < 4 || float64(n) > 3+elapsed.Seconds()/0.08+1 {
		t.Errorf("%d probes in %s, want one per backoff interval", n, elapsed)
	}

	release()
	back, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("relisten on %s: %v", addr, err)
	}
	defer back.Close()
	go func() {
		for {
			c, err := back.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	backAt := time.Now()
	for h.down(addr) {
		if time.Since(backAt) > 2*time.Second {
			t.Fatal("upstream back for 2s, still marked down")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The next probe is at most 100 ms + 20% away; the rest is this
	// machine's scheduling, which on a loaded CI runner under -race can
	// take hundreds of milliseconds. A backoff left uncapped would take
	// seconds.
	if took := time.Since(backAt); took > time.Second {
		t.Errorf("noticed the upstream back after %s, want within about the max backoff (100ms + jitter)", took)
	}
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		told := len(changes)
		mu.Unlock()
		if told >= 2 || time.Now().After(deadline) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(changes) != 2 || !changes[0] || changes[1] {
		t.Errorf("listeners told %v, want [down up]", changes)
	}
	n := probes.Load()
	time.Sleep(300 * time.Millisecond)
	if probes.Load() != n {
		t.Error("still probing an upstream that is up")
	}
}

// TestHealthOrdersBootstrapServers: servers known down are left out, slow
// ones (a dial outlasted the head start) go last, the rest keep their
// configured order; a slow server that answers is fast again.
func TestHealthOrdersBootstrapServers(t *testing.T) {
	h, _ := newTestHealth(t, healthSettings{backoff: time.Second, maxBackoff: time.Second, logEvery: time.Minute})
	servers := []string{"a:1", "b:1", "c:1", "d:1"}
	h.markSlow("a:1")
	h.record("c:1", bootstrapNode, errRefused)
	if got := strings.Join(h.order(servers), " "); got != "b:1 d:1 a:1" {
		t.Errorf("order = %s, want b:1 d:1 a:1 (c down, a slow)", got)
	}
	h.record("a:1", bootstrapNode, nil)
	h.markSlow("c:1") // down stays down, not slow
	if got := strings.Join(h.order(servers), " "); got != "a:1 b:1 d:1" {
		t.Errorf("order = %s, want a:1 b:1 d:1", got)
	}
}
