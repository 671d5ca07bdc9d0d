package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/bench/procstat"
)

// Sample is one measurement of one load against one target.
type Sample struct {
	Round   int     `json:"round"`
	Seconds float64 `json:"seconds"` // measured window
	Bytes   int64   `json:"bytes"`   // record value bytes acknowledged or consumed in the window
	Records int64   `json:"records"`
	MBps    float64 `json:"mb_per_s"` // 10^6 bytes/s
	RecPerS float64 `json:"records_per_s"`
	// ProxyCPUSeconds is the proxy process's utime+stime over the window
	// (/proc/PID/stat); absent for direct.
	ProxyCPUSeconds *float64 `json:"proxy_cpu_s,omitempty"`
	// ProxyCPUPerGiB is ProxyCPUSeconds per 2^30 bytes moved.
	ProxyCPUPerGiB *float64 `json:"proxy_cpu_s_per_gib,omitempty"`
	// ProxyMillicores is ProxyCPUSeconds per second of the window, in
	// thousandths of a core: the unit of a Kubernetes CPU request.
	ProxyMillicores *float64 `json:"proxy_millicores,omitempty"`
	// ProxyCPUPerReqUs is proxy CPU microseconds per request (latency load).
	ProxyCPUPerReqUs *float64 `json:"proxy_cpu_us_per_req,omitempty"`
	// BenchCPUPerGiB is this process's CPU (client and embedded upstream)
	// per GiB: the same work for every target, so it shows noise.
	BenchCPUPerGiB float64 `json:"bench_cpu_s_per_gib,omitempty"`
	// ProxyPeakRSS is the proxy's VmHWM over the measurement (reset at
	// its start), bytes.
	ProxyPeakRSS int64 `json:"proxy_peak_rss_bytes,omitempty"`
	Errors       int64 `json:"errors,omitempty"`
	// LoadAvg1 is the machine's 1-minute load average when the
	// measurement ended: other work on the machine shows here.
	LoadAvg1 float64 `json:"loadavg_1m"`
	// Latency percentiles, microseconds (latency load only).
	P50  float64 `json:"p50_us,omitempty"`
	P90  float64 `json:"p90_us,omitempty"`
	P99  float64 `json:"p99_us,omitempty"`
	P999 float64 `json:"p999_us,omitempty"`

	latencies []time.Duration
}

// meter reads the proxy's and our own CPU time around a measured window.
type meter struct {
	pid          int
	t0           time.Time
	cpu0, self0  time.Duration
	wall         time.Duration
	cpu, self    time.Duration
	peakResetErr error
	started      bool
}

func newMeter(pid int) *meter {
	m := &meter{pid: pid}
	if pid != 0 {
		m.peakResetErr = procstat.ResetPeak(pid)
	}
	return m
}

func (m *meter) start() {
	m.started = true
	if m.pid != 0 {
		m.cpu0, _ = procstat.CPU(m.pid)
	}
	m.self0, _ = procstat.CPU(os.Getpid())
	m.t0 = time.Now()
}

func (m *meter) stop() {
	m.wall = time.Since(m.t0)
	if m.pid != 0 {
		c, _ := procstat.CPU(m.pid)
		m.cpu = c - m.cpu0
	}
	s, _ := procstat.CPU(os.Getpid())
	m.self = s - m.self0
}

// fill completes a throughput sample from the meter and the counts.
func (m *meter) fill(s *Sample, bytes, records int64) {
	s.Seconds = m.wall.Seconds()
	s.Bytes, s.Records = bytes, records
	if s.Seconds > 0 {
		s.MBps = float64(bytes) / 1e6 / s.Seconds
		s.RecPerS = float64(records) / s.Seconds
	}
	gib := float64(bytes) / (1 << 30)
	if m.pid != 0 {
		cpu := m.cpu.Seconds()
		s.ProxyCPUSeconds = &cpu
		if s.Seconds > 0 {
			mc := cpu / s.Seconds * 1000
			s.ProxyMillicores = &mc
		}
		if gib > 0 {
			per := cpu / gib
			s.ProxyCPUPerGiB = &per
		}
		if mem, err := procstat.Mem(m.pid); err == nil {
			s.ProxyPeakRSS = mem.Peak
		}
	}
	if gib > 0 {
		s.BenchCPUPerGiB = m.self.Seconds() / gib
	}
}

// clientOpts are the options every load's client shares: the target's
// seeds and dialer, and no compression unless asked (the proxies move
// bytes; compression would only move client CPU around, except through a
// proxy that re-encodes batches, as encryption does).
func clientOpts(t *target, o *Options) []kgo.Opt {
	codec := kgo.NoCompression()
	if o.Compression == "lz4" {
		codec = kgo.Lz4Compression()
	}
	return []kgo.Opt{
		kgo.SeedBrokers(t.seeds...),
		kgo.Dialer(t.dial),
		kgo.ClientID("kproxy-bench"),
		kgo.ProducerBatchCompression(codec),
		kgo.DefaultProduceTopic(o.Topic),
		kgo.RequestRetries(3),
	}
}

// pacer spreads work at a byte rate; zero rate never waits. It allows at
// most burst of catch-up after a stall, so a slow target is not handed a
// flood once it recovers.
type pacer struct {
	rate  float64 // bytes per second
	start time.Time
	done  float64 // bytes issued
	burst float64
}

func newPacer(rateMBps float64) *pacer {
	r := rateMBps * 1e6
	return &pacer{rate: r, start: time.Now(), burst: r / 20} // 50ms
}

// wait blocks until n more bytes may go, or ctx ends.
func (p *pacer) wait(ctx context.Context, n int) {
	if p.rate <= 0 {
		return
	}
	allowed := p.rate * time.Since(p.start).Seconds()
	if allowed-p.done > p.burst {
		p.done = allowed - p.burst
	}
	// Sleep only when a millisecond or more ahead: finer sleeps cost a
	// timer per record and oversleep anyway.
	if ahead := p.done - allowed; ahead >= p.rate/1000 {
		d := time.Duration(ahead / p.rate * float64(time.Second))
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	p.done += float64(n)
}

var errClosing = errors.New("load over")

// runProduce produces RecordBytes records as fast as the client can (rate
// 0) or at rateMBps, and counts what the cluster acknowledged during the
// measured window.
func runProduce(ctx context.Context, t *target, o *Options, rateMBps float64) (Sample, error) {
	cl, err := kgo.NewClient(clientOpts(t, o)...)
	if err != nil {
		return Sample{}, err
	}
	defer cl.Close()

	value := make([]byte, o.RecordBytes)
	rand.New(rand.NewSource(1)).Read(value)
	var acked, failed atomic.Int64
	var firstErr atomic.Pointer[error]
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	cb := func(_ *kgo.Record, err error) {
		if err == nil {
			acked.Add(1)
			return
		}
		if pctx.Err() == nil {
			failed.Add(1)
			firstErr.CompareAndSwap(nil, &err)
		}
	}

	m := newMeter(t.pid())
	var pace *pacer
	if rateMBps > 0 {
		pace = newPacer(rateMBps)
	}
	warmEnd := time.Now().Add(o.Warmup)
	var acked0, failed0 int64
	for {
		now := time.Now()
		// The window opens after the warm-up, and not before the first
		// acknowledgement: connection set-up is never measured.
		if !m.started && !now.Before(warmEnd) && acked.Load() > 0 {
			acked0, failed0 = acked.Load(), failed.Load()
			m.start()
		}
		if m.started && now.Sub(m.t0) >= o.Duration {
			break
		}
		if ctx.Err() != nil {
			return Sample{}, ctx.Err()
		}
		if f := failed.Load(); f > 1000 {
			return Sample{}, fmt.Errorf("produce: %d records failed, first: %w", f, *firstErr.Load())
		}
		if pace != nil {
			pace.wait(pctx, o.RecordBytes)
		}
		cl.Produce(pctx, &kgo.Record{Value: value}, cb)
	}
	m.stop()
	a := acked.Load() - acked0
	var s Sample
	m.fill(&s, a*int64(o.RecordBytes), a)
	s.Errors = failed.Load() - failed0
	cancel(errClosing)
	if a == 0 {
		if e := firstErr.Load(); e != nil {
			return s, fmt.Errorf("produce: nothing acknowledged: %w", *e)
		}
		return s, errors.New("produce: nothing acknowledged in the window")
	}
	return s, nil
}

// runConsume reads the bench topic's 16 partitions with a direct
// (groupless) consumer, as fast as the client can or at rateMBps, counting
// record value bytes polled in the window.
func runConsume(ctx context.Context, t *target, o *Options, rateMBps float64) (Sample, error) {
	opts := append(clientOpts(t, o),
		kgo.ConsumeTopics(o.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return Sample{}, err
	}
	defer cl.Close()

	m := newMeter(t.pid())
	var pace *pacer
	if rateMBps > 0 {
		pace = newPacer(rateMBps)
	}
	warmEnd := time.Now().Add(o.Warmup)
	var bytes, records, errs int64
	var bytes0, records0 int64
	var lastErr error
	for {
		now := time.Now()
		// As for produce: after the warm-up and the first records.
		if !m.started && !now.Before(warmEnd) && records > 0 {
			bytes0, records0 = bytes, records
			m.start()
		}
		var end time.Time
		switch {
		case m.started:
			end = m.t0.Add(o.Duration)
		case now.Before(warmEnd):
			end = warmEnd
		default:
			end = now.Add(100 * time.Millisecond) // still waiting for data
		}
		if m.started && !now.Before(end) {
			break
		}
		pctx, cancel := context.WithDeadline(ctx, end)
		fs := cl.PollRecords(pctx, 4096)
		cancel()
		if ctx.Err() != nil {
			return Sample{}, ctx.Err()
		}
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				errs++
				lastErr = err
			}
		})
		var n int64
		fs.EachRecord(func(r *kgo.Record) {
			n += int64(len(r.Value))
			records++
		})
		bytes += n
		if pace != nil && n > 0 {
			pace.wait(ctx, int(n))
		}
		if errs > 100 {
			return Sample{}, fmt.Errorf("consume: %d fetch errors, last: %w", errs, lastErr)
		}
	}
	m.stop()
	var s Sample
	m.fill(&s, bytes-bytes0, records-records0)
	s.Errors = errs
	if s.Bytes == 0 {
		if lastErr != nil {
			return s, fmt.Errorf("consume: nothing consumed: %w", lastErr)
		}
		return s, errors.New("consume: nothing consumed in the window")
	}
	return s, nil
}

// latencyValueBytes is the size of the record each latency round trip
// produces.
const latencyValueBytes = 100

// runLatency produces one small record at a time, waiting for each
// acknowledgement (acks=all, no linger), o.LatencyN times after a short
// warm-up, and records every round trip.
// quantile is the nearest-rank quantile of sorted samples.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
