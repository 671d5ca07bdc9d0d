package quota

import "time"

// Windows is how a rate is measured, as Kafka's quota.window.num
// (Samples) and quota.window.size.seconds (Size).
type Windows struct {
	Samples int
	Size    time.Duration
}

// sample is one window of a Rate: Kafka's SampledStat.Sample.
type sample struct {
	start, lastEvent time.Time
	value            float64
}

func (s *sample) reset(now time.Time) { *s = sample{start: now, lastEvent: now} }

// Rate is Kafka's sampled rate (org.apache.kafka.common.metrics.stats.Rate
// over SampledStat), with its semantics:
//   - values go to the current window; a window is complete once Size has
//     passed since it started, and the next value starts a new one,
//     reusing the oldest of Samples+1 windows (one extra: the window that
//     overlaps the start of the measured span);
//   - a window with no value for Samples×Size is reset (purged);
//   - the rate is the sum of all windows over the time since the oldest
//     window started, that span counted as at least Samples-1 whole
//     windows, so that a first burst is measured against nearly the full
//     span rather than the few milliseconds since it began.
//
// A Rate is not safe for concurrent use; its entity's lock guards it.
type Rate struct {
	windows Windows
	samples []sample // at most Samples+1
	current int
}

// NewRate returns an empty rate measured over w.
func NewRate(w Windows) *Rate { return &Rate{windows: w} }

// Record adds value at now.
func (r *Rate) Record(value float64, now time.Time) {
	cur := r.currentSample(now)
	if now.Sub(cur.start) >= r.windows.Size {
		cur = r.advance(now)
	}
	cur.value += value
	cur.lastEvent = now
}

func (r *Rate) currentSample(now time.Time) *sample {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{start: now, lastEvent: now})
	}
	return &r.samples[r.current]
}

func (r *Rate) advance(now time.Time) *sample {
	r.current = (r.current + 1) % (r.windows.Samples + 1)
	if r.current >= len(r.samples) {
		r.samples = append(r.samples, sample{start: now, lastEvent: now})
	} else {
		r.samples[r.current].reset(now)
	}
	return &r.samples[r.current]
}

// purge resets windows without a value for Samples×Size.
func (r *Rate) purge(now time.Time) {
	expire := time.Duration(r.windows.Samples) * r.windows.Size
	for i := range r.samples {
		if now.Sub(r.samples[i].lastEvent) >= expire {
			r.samples[i].reset(now)
		}
	}
}

// Measure is the rate per second at now.
func (r *Rate) Measure(now time.Time) float64 {
	span := r.WindowSize(now) // first: it purges what sum must not count
	return r.sum() / span.Seconds()
}

// sum is the total of the windows, once purged.
func (r *Rate) sum() float64 {
	var total float64
	for i := range r.samples {
		total += r.samples[i].value
	}
	return total
}

// WindowSize is the span the rate is measured over at now (Kafka's
// Rate.windowSize): since the oldest window started, at least
// Samples-1 whole windows.
func (r *Rate) WindowSize(now time.Time) time.Duration {
	r.purge(now)
	oldest := now
	for i := range r.samples {
		if r.samples[i].start.Before(oldest) {
			oldest = r.samples[i].start
		}
	}
	elapsed := now.Sub(oldest)
	full := int(elapsed / r.windows.Size)
	if minFull := r.windows.Samples - 1; full < minFull {
		elapsed += time.Duration(minFull-full) * r.windows.Size
	}
	return elapsed
}

// RecordChecked records value at now and returns the throttle time a
// quota of bound per second then calls for, as Kafka's quota managers
// compute it: zero while the measured rate is within bound, else
// (rate - bound) / bound × WindowSize, the time it takes the average to
// come back to the bound.
func (r *Rate) RecordChecked(value, bound float64, now time.Time) time.Duration {
	r.Record(value, now)
	span := r.WindowSize(now) // what Measure divides by, computed once
	rate := r.sum() / span.Seconds()
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
