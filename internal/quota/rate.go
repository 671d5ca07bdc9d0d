package quota

import "time"

// Windows is how a rate is measured, as Kafka's quota.window.num
// (Samples) and quota.window.size.seconds (Size).
type Windows struct {
	Samples int
	Size    time.Duration
}

// sample is one window of a Rate: Kafka's SampledStat.Sample. Times are
// Unix nanoseconds (integer arithmetic on the data path).
type sample struct {
	start, lastEvent int64
	value            float64
}

func (s *sample) reset(now int64) { *s = sample{start: now, lastEvent: now} }

// Rate is Kafka's sampled rate (org.apache.kafka.common.metrics.stats.Rate
// over SampledStat), with its semantics:
//   - values go to the current window; a window is complete once Size has
//     passed since it started, and the next value starts a new one,
//     reusing the oldest of the Samples windows (as SampledStat.advance
//     does: current = (current + 1) % samples);
//   - a window with no value for Samples×Size is reset (purged);
//   - the rate is the sum of all windows over the time since the oldest
//     window started, that span counted as at least Samples-1 whole
//     windows, so that a first burst is measured against nearly the full
//     span rather than the few milliseconds since it began.
//
// A Rate is not safe for concurrent use; its entity's lock guards it.
type Rate struct {
	windows Windows
	samples []sample // at most Samples
	current int
}

// NewRate returns an empty rate measured over w.
func NewRate(w Windows) *Rate { return &Rate{windows: w} }

// Record adds value at now.
func (r *Rate) Record(value float64, now time.Time) { r.record(value, now.UnixNano()) }

func (r *Rate) record(value float64, now int64) {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{start: now, lastEvent: now})
	}
	cur := &r.samples[r.current]
	if now-cur.start >= int64(r.windows.Size) {
		cur = r.advance(now)
	}
	cur.value += value
	cur.lastEvent = now
}

func (r *Rate) advance(now int64) *sample {
	r.current = (r.current + 1) % r.windows.Samples
	if r.current >= len(r.samples) {
		r.samples = append(r.samples, sample{start: now, lastEvent: now})
	} else {
		r.samples[r.current].reset(now)
	}
	return &r.samples[r.current]
}

// purge resets windows without a value for Samples×Size, and returns the
// sum of the windows left.
func (r *Rate) purge(now int64) (sum float64) {
	expire := int64(r.windows.Samples) * int64(r.windows.Size)
	for i := range r.samples {
		if now-r.samples[i].lastEvent >= expire {
			r.samples[i].reset(now)
		}
		sum += r.samples[i].value
	}
	return sum
}

// span is the time the rate is measured over, once purged: since the
// oldest window started, at least Samples-1 whole windows.
func (r *Rate) span(now int64) time.Duration {
	oldest := now
	for i := range r.samples {
		oldest = min(oldest, r.samples[i].start)
	}
	elapsed := time.Duration(now - oldest)
	full := int(elapsed / r.windows.Size)
	if minFull := r.windows.Samples - 1; full < minFull {
		elapsed += time.Duration(minFull-full) * r.windows.Size
	}
	return elapsed
}

// Measure is the rate per second at now.
func (r *Rate) Measure(now time.Time) float64 {
	n := now.UnixNano()
	sum := r.purge(n)
	return sum / r.span(n).Seconds()
}

// WindowSize is the span the rate is measured over at now (Kafka's
// Rate.windowSize): since the oldest window started, at least
// Samples-1 whole windows.
func (r *Rate) WindowSize(now time.Time) time.Duration {
	n := now.UnixNano()
	r.purge(n)
	return r.span(n)
}

// RecordChecked records value at now and returns the throttle time a
// quota of bound per second then calls for, as Kafka's quota managers
// compute it: zero while the measured rate is within bound, else
// (rate - bound) / bound × WindowSize, the time it takes the average to
// come back to the bound.
func (r *Rate) RecordChecked(value, bound float64, now time.Time) time.Duration {
	n := now.UnixNano()
	r.record(value, n)
	return r.throttle(bound, n)
}

// Throttle is the throttle time a quota of bound per second calls for at
// now with nothing more recorded: how long until the rate is back within
// bound (0: it is). A request that arrives while it is over is answered
// without being served, as a broker answers a throttled fetch.
func (r *Rate) Throttle(bound float64, now time.Time) time.Duration {
	return r.throttle(bound, now.UnixNano())
}

func (r *Rate) throttle(bound float64, n int64) time.Duration {
	sum := r.purge(n)
	// The span is at least Samples-1 windows: within that much of the
	// bound, the rate is within it, and the span need not be found (the
	// common case on the data path).
	if sum <= bound*(time.Duration(r.windows.Samples-1)*r.windows.Size).Seconds() {
		return 0
	}
	span := r.span(n)
	rate := sum / span.Seconds()
	if rate <= bound {
		return 0
	}
	return time.Duration(min((rate-bound)/bound*float64(span), float64(MaxThrottle)))
}

// MaxThrottle is the longest throttle a rate asks for: what
// throttle_time_ms (int32 milliseconds) can say, about 24.8 days. Only a
// tiny quota reaches it; the bound keeps the float-to-duration conversion
// from overflowing into a negative (no) throttle.
const MaxThrottle = time.Duration(1<<31-1) * time.Millisecond
