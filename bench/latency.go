package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/bench/procstat"
)

// latencySlice is how many round trips one target makes before the next
// target's turn within a latency round. Sequential round trips are the
// measurement most sensitive to what else the machine does; taking turns
// in short slices spreads every target over the whole round, so drift in
// the background load falls on all of them alike.
const latencySlice = 100

// latencyRun is one target's state during a latency round.
type latencyRun struct {
	t    *target
	cl   *kgo.Client
	err  error
	lats []time.Duration
	cpu  time.Duration // proxy CPU summed over the target's slices
	wall time.Duration
}

// runLatencyRound makes o.LatencyN sequential ProduceSync round trips on
// each target, one client per target, in turns of latencySlice, starting
// with targets[0]. It returns one sample (or error) per target, in order.
func runLatencyRound(ctx context.Context, targets []*target, o *Options) ([]Sample, []error) {
	value := make([]byte, latencyValueBytes)
	runs := make([]*latencyRun, len(targets))
	for i, t := range targets {
		runs[i] = &latencyRun{t: t, lats: make([]time.Duration, 0, o.LatencyN)}
		runs[i].start(ctx, o, value)
	}
	defer func() {
		for _, r := range runs {
			if r.cl != nil {
				r.cl.Close()
			}
		}
	}()
	for done := 0; done < o.LatencyN; done += latencySlice {
		n := min(latencySlice, o.LatencyN-done)
		for _, r := range runs {
			r.slice(ctx, n, value)
		}
	}
	samples := make([]Sample, len(runs))
	errs := make([]error, len(runs))
	for i, r := range runs {
		samples[i], errs[i] = r.sample()
	}
	return samples, errs
}

// start connects and warms the target up: a tenth of the round trips (at
// least 20), unmeasured, so connection set-up is never measured.
func (r *latencyRun) start(ctx context.Context, o *Options, value []byte) {
	if pid := r.t.pid(); pid != 0 {
		procstat.ResetPeak(pid)
	}
	r.cl, r.err = kgo.NewClient(append(clientOpts(r.t, o), kgo.ProducerLinger(0))...)
	for i := 0; r.err == nil && i < max(o.LatencyN/10, 20); i++ {
		if err := r.cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
			r.err = fmt.Errorf("latency warm-up: %w", err)
		}
	}
}

// slice makes n measured round trips.
func (r *latencyRun) slice(ctx context.Context, n int, value []byte) {
	if r.err != nil {
		return
	}
	pid := r.t.pid()
	var cpu0 time.Duration
	if pid != 0 {
		cpu0, _ = procstat.CPU(pid)
	}
	start := time.Now()
	for range n {
		t0 := time.Now()
		if err := r.cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
			r.err = fmt.Errorf("latency: %w", err)
			return
		}
		r.lats = append(r.lats, time.Since(t0))
	}
	r.wall += time.Since(start)
	if pid != 0 {
		cpu1, _ := procstat.CPU(pid)
		r.cpu += cpu1 - cpu0
	}
}

func (r *latencyRun) sample() (Sample, error) {
	if r.err != nil {
		return Sample{}, r.err
	}
	s := Sample{Seconds: r.wall.Seconds(), Records: int64(len(r.lats)), Bytes: int64(len(r.lats) * latencyValueBytes)}
	if s.Seconds > 0 {
		s.RecPerS = float64(s.Records) / s.Seconds
		s.MBps = float64(s.Bytes) / 1e6 / s.Seconds
	}
	if pid := r.t.pid(); pid != 0 {
		cpu := r.cpu.Seconds()
		per := cpu * 1e6 / float64(len(r.lats))
		s.ProxyCPUSeconds, s.ProxyCPUPerReqUs = &cpu, &per
		if mem, err := procstat.Mem(pid); err == nil {
			s.ProxyPeakRSS = mem.Peak
		}
	}
	lats := slices.Clone(r.lats)
	slices.Sort(lats)
	s.P50 = us(quantile(lats, 0.50))
	s.P90 = us(quantile(lats, 0.90))
	s.P99 = us(quantile(lats, 0.99))
	s.P999 = us(quantile(lats, 0.999))
	s.latencies = lats
	return s, nil
}
