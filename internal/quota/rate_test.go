package quota

import (
	"math"
	"testing"
	"time"
)

// kafkaWindows are the broker's defaults: quota.window.num 11,
// quota.window.size.seconds 1.
var kafkaWindows = Windows{Samples: 11, Size: time.Second}

var epoch = time.Unix(1_700_000_000, 0)

func near(got, want, tolerance float64) bool { return math.Abs(got-want) <= tolerance }

// TestRateBurst: a first burst is measured over Samples-1 whole windows,
// as Kafka's Rate.windowSize pads a young rate, so a client may send up to
// quota × (Samples-1) windows at once before it is throttled; the byte
// beyond gets (rate - quota)/quota × window size.
func TestRateBurst(t *testing.T) {
	r := NewRate(kafkaWindows)
	const quota = 5e6
	if th := r.RecordChecked(50e6, quota, epoch); th != 0 {
		t.Fatalf("a 50 MB burst within the 10 s allowance of a 5 MB/s quota was throttled %v", th)
	}
	if got := r.WindowSize(epoch); got != 10*time.Second {
		t.Fatalf("window size of a new rate %v, want 10s (samples-1 windows)", got)
	}
	// 51 MB over 10 s = 5.1 MB/s: (5.1-5)/5 × 10 s = 200 ms.
	th := r.RecordChecked(1e6, quota, epoch)
	if want := 200 * time.Millisecond; !near(float64(th), float64(want), float64(time.Millisecond)) {
		t.Fatalf("throttle after the burst %v, want %v", th, want)
	}
}

// twiceTheQuota is a rate after 30 s of 2 × quota per second, in 100 ms
// steps that ignore the throttles: when it ended, and its last throttle.
func twiceTheQuota(quota float64) (r *Rate, end time.Time, throttle time.Duration) {
	r = NewRate(kafkaWindows)
	for i := 0; i < 300; i++ {
		end = epoch.Add(time.Duration(i) * 100 * time.Millisecond)
		throttle = r.RecordChecked(quota/5, quota, end)
	}
	return r, end, throttle
}

// TestRateSteadyOverage: a client sending at twice the quota, ignoring
// throttles, is measured at twice the quota once the windows are full,
// and told to wait one whole span each time ((2q-q)/q × span).
func TestRateSteadyOverage(t *testing.T) {
	const quota = 1000.0
	r, now, th := twiceTheQuota(quota)
	if got := r.Measure(now); !near(got, 2*quota, 0.1*quota) {
		t.Fatalf("steady rate measured %v, want about %v", got, 2*quota)
	}
	span := r.WindowSize(now)
	if span < 10*time.Second || span > 12*time.Second {
		t.Fatalf("span of full windows %v, want 10-12 s (samples+1 windows kept, those idle for samples × size purged)", span)
	}
	want := time.Duration((r.Measure(now) - quota) / quota * float64(span))
	if !near(float64(th), float64(want), float64(50*time.Millisecond)) || th < 10*time.Second {
		t.Fatalf("throttle at 2x the quota %v, want %v (about one span)", th, want)
	}
}

// TestRateRecovery: a client over its quota that waits the throttle time
// it was given is back within the quota; a single burst that fills one
// window stays counted until that window is purged, Samples × Size after
// its last value (Kafka's formula assumes a span that would grow by the
// throttle time, so such a client is throttled once more before that).
func TestRateRecovery(t *testing.T) {
	const quota = 1000.0
	r, now, th := twiceTheQuota(quota)
	after := now.Add(th)
	if got := r.Measure(after); got > quota {
		t.Fatalf("after waiting the throttle time %v the rate is %v, still over %v", th, got, quota)
	}
	if th := r.RecordChecked(100, quota, after); th != 0 {
		t.Fatalf("a small request after the throttle time was throttled %v", th)
	}

	burst := NewRate(kafkaWindows)
	if th := burst.RecordChecked(20_000, quota, epoch); th != 10*time.Second {
		t.Fatalf("throttle %v, want 10s: (20000/10 - 1000)/1000 × 10 s", th)
	}
	if th := burst.RecordChecked(1, quota, epoch.Add(10*time.Second)); th == 0 {
		t.Fatal("the burst's window is still in the span at 10 s: Kafka throttles again")
	}
	purged := epoch.Add(11 * time.Second)
	if got := burst.Measure(purged); got > 0.1 { // only the 1 recorded at 10 s is left
		t.Fatalf("11 s (samples × size) after the burst the rate is %v, want it purged", got)
	}
	if th := burst.RecordChecked(1, quota, purged); th != 0 {
		t.Fatalf("after the purge a small request was throttled %v", th)
	}
}

// TestRateGreedyClientAverages: a client that always sends again as soon
// as its throttle is over is held to the quota on average: the measured
// long-run rate is within 10% of it, with fine windows from a cold start
// too.
func TestRateGreedyClientAverages(t *testing.T) {
	for _, w := range []Windows{kafkaWindows, {Samples: 11, Size: 100 * time.Millisecond}} {
		r := NewRate(w)
		const quota, request = 5e6, 256e3
		var total float64
		now := epoch
		for now.Sub(epoch) < 120*time.Second {
			th := r.RecordChecked(request, quota, now)
			total += request
			now = now.Add(max(th, 5*time.Millisecond))
		}
		// Less the first burst's allowance, which the long run spreads.
		allowance := quota * float64(w.Samples-1) * w.Size.Seconds()
		got := (total - allowance) / now.Sub(epoch).Seconds()
		if !near(got, quota, 0.1*quota) {
			t.Errorf("windows %v: greedy client averaged %.0f B/s, want %v ±10%%", w, got, quota)
		}
	}
}

// BenchmarkRecordChecked is the per-request cost of a quota that applies
// but is not reached: what a produce or fetch pays on the data path.
func BenchmarkRecordChecked(b *testing.B) {
	r := NewRate(kafkaWindows)
	t := epoch
	for i := 0; b.Loop(); i++ {
		t = t.Add(time.Microsecond)
		r.RecordChecked(1000, 1e15, t)
	}
}

// TestRateHugeOverageIsBounded: a request far over a tiny quota gets the
// longest throttle, never an overflowed (negative: none) one.
func TestRateHugeOverageIsBounded(t *testing.T) {
	r := NewRate(kafkaWindows)
	if th := r.RecordChecked(1<<31, 1e-9, epoch); th != MaxThrottle {
		t.Fatalf("throttle %v, want MaxThrottle %v", th, MaxThrottle)
	}
}

// TestRateKeepsSamplesWindows: as Kafka's SampledStat, a rate of Samples
// windows reuses the oldest when the next starts, so a value older than
// Samples windows no longer counts. With 2 windows of 1 s, 50 at 0 s and
// 0.9 s (too recent to be purged at 2 s), then 100 at 1 s and 2 s, the
// window of 0 s is reused at 2 s: 200 over the 1 s since the oldest window
// left started, 200/s (an extra window would keep all 300 over 2 s:
// 150/s).
func TestRateKeepsSamplesWindows(t *testing.T) {
	start := time.Unix(1000, 0)
	r := NewRate(Windows{Samples: 2, Size: time.Second})
	r.Record(50, start)
	r.Record(50, start.Add(900*time.Millisecond))
	r.Record(100, start.Add(time.Second))
	r.Record(100, start.Add(2*time.Second))
	if got := r.Measure(start.Add(2 * time.Second)); got != 200 {
		t.Fatalf("rate at 2 s: %v/s, want 200/s", got)
	}
}
