package conformance

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The measuring harness of the quota cells: a trace of how many bytes a
// client has moved over time, and the rate it shows over the measuring
// window once the client has settled under its quota.
const (
	// quotaWarmup is skipped after the first byte: the client's start-up
	// and the burst a sampled rate admits before it throttles (one window
	// of quota bytes with quotaWindows) are not the steady rate.
	quotaWarmup = 4 * time.Second
	// quotaWindow is how long the rate is measured (20 s).
	quotaWindow = 20 * time.Second
	// quotaBand is the tolerance around the quota (±10%).
	quotaBand = 0.10
	// quotaRecordSize is every record's value size: large, so that the
	// clients spend little CPU per byte (with 1,000-byte records, on 2
	// busy cores, confluent-kafka and the Java tools could not always go
	// faster than the quota). Rates are payload bytes; Kafka's quotas
	// count whole requests and responses, under 1% more with records of
	// this size (batch and record headers).
	quotaRecordSize = 8000
)

// traceSample is the cumulative payload a client had moved at a time.
type traceSample struct {
	at    time.Time
	bytes int64
}

// rateTrace is a growing series of cumulative samples. Safe for concurrent
// use.
type rateTrace struct {
	mu      sync.Mutex
	samples []traceSample
}

func (r *rateTrace) add(at time.Time, bytes int64) {
	r.mu.Lock()
	r.samples = append(r.samples, traceSample{at, bytes})
	r.mu.Unlock()
}

func (r *rateTrace) snapshot() []traceSample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]traceSample(nil), r.samples...)
}

// firstByte is when the trace first shows progress, or false.
func (r *rateTrace) firstByte() (time.Time, bool) {
	for _, s := range r.snapshot() {
		if s.bytes > 0 {
			return s.at, true
		}
	}
	return time.Time{}, false
}

// windowEnd is when the measuring window of the trace closes (first byte
// + warm-up + window), or false if no byte was seen yet.
func (r *rateTrace) windowEnd() (time.Time, bool) {
	first, ok := r.firstByte()
	return first.Add(quotaWarmup + quotaWindow), ok
}

// at is the cumulative bytes at time t, linearly interpolated between the
// samples around it; false if t is outside the trace.
func at(ss []traceSample, t time.Time) (float64, bool) {
	for i := 1; i < len(ss); i++ {
		a, b := ss[i-1], ss[i]
		if t.Before(a.at) || t.After(b.at) {
			continue
		}
		span := b.at.Sub(a.at)
		if span <= 0 {
			return float64(b.bytes), true
		}
		f := float64(t.Sub(a.at)) / float64(span)
		return float64(a.bytes) + f*float64(b.bytes-a.bytes), true
	}
	return 0, false
}

// measured is the rate of a trace over its measuring window.
type measured struct {
	rate   float64 // bytes per second over the window
	total  int64   // bytes over the whole trace
	window string  // what was measured, for notes and errors
}

// measure is the trace's rate over the measuring window, or an error that
// says why it has none (no progress, or the client finished before the
// window closed: it went faster than the quota allows).
func (r *rateTrace) measure() (measured, error) {
	ss := r.snapshot()
	first, ok := r.firstByte()
	if !ok {
		return measured{}, fmt.Errorf("no byte moved in %d samples", len(ss))
	}
	last := ss[len(ss)-1]
	start, end := first.Add(quotaWarmup), first.Add(quotaWarmup+quotaWindow)
	a, okA := at(ss, start)
	b, okB := at(ss, end)
	if !okA || !okB {
		return measured{total: last.bytes}, fmt.Errorf("the client moved %s in %s from its first byte, so it finished before the %s measuring window (after %s of warm-up) closed: %.2f MB/s on average",
			mb(last.bytes), last.at.Sub(first).Round(100*time.Millisecond), quotaWindow, quotaWarmup, float64(last.bytes)/1e6/last.at.Sub(first).Seconds())
	}
	return measured{rate: (b - a) / end.Sub(start).Seconds(), total: last.bytes,
		window: fmt.Sprintf("%.1f MB over %s after %s of warm-up", (b-a)/1e6, quotaWindow, quotaWarmup)}, nil
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// checkRate fails t unless the trace's rate over the window is within
// the band around quota (bytes per second); it notes the rate either way.
func checkRate(t *testing.T, c *cellCtx, what string, tr *rateTrace, quota float64) measured {
	t.Helper()
	m, err := tr.measure()
	if err != nil {
		t.Errorf("%s: %v (quota %.2f MB/s)", what, err, quota/1e6)
		return m
	}
	c.note("%s %.2f MB/s (quota %.2f MB/s, %s)", what, m.rate/1e6, quota/1e6, m.window)
	if d := (m.rate - quota) / quota; d > quotaBand || d < -quotaBand {
		t.Errorf("%s: %.2f MB/s over the window (%s), quota %.2f MB/s: %+.1f%%, outside ±%.0f%%; MB/s second by second from the first byte: %s",
			what, m.rate/1e6, m.window, quota/1e6, 100*d, 100*quotaBand, tr.perSecond())
	}
	return m
}

// perSecond lists the trace's rate in each second from its first byte,
// for a failure's message.
func (r *rateTrace) perSecond() string {
	ss := r.snapshot()
	first, ok := r.firstByte()
	if !ok {
		return "none"
	}
	var b strings.Builder
	prev := 0.0
	for i := 1; ; i++ {
		v, ok := at(ss, first.Add(time.Duration(i)*time.Second))
		if !ok {
			break
		}
		fmt.Fprintf(&b, " %.1f", (v-prev)/1e6)
		prev = v
	}
	return strings.TrimSpace(b.String())
}

// traceLog samples the sum of topic's log-end offsets (what the brokers
// hold, asked directly) every 200 ms into a trace of payload bytes, until
// the returned stop is called. It is the produce cells' measure, taken
// independently of the client.
func (e *env) traceLog(t *testing.T, topic string) (tr *rateTrace, stop func()) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.upstream...))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	tr = &rateTrace{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
			n, err := logEnd(rctx, adm, topic)
			rcancel()
			if err == nil {
				tr.add(time.Now(), n*quotaRecordSize)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done; cl.Close() }) }
	t.Cleanup(stop)
	return tr, stop
}

// logEnd is the number of records in topic: the sum of its log-end
// offsets.
func logEnd(ctx context.Context, adm *kadm.Client, topic string) (int64, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	var n int64
	var perr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			perr = o.Err
		}
		n += o.Offset
	})
	return n, perr
}

// waitWindow waits until tr's measuring window has closed (plus a
// second), or until timeout; done, if closed first, ends the wait early
// (the client finished).
func waitWindow(tr *rateTrace, timeout time.Duration, done <-chan struct{}) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if end, ok := tr.windowEnd(); ok && time.Now().After(end.Add(time.Second)) {
			return
		}
		select {
		case <-done:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}
