package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/bench/procstat"
	"github.com/kproxy/kproxy/internal/objectstore"
)

// largeRecordTarget is the kproxy process of the one-shot large-record
// measurement.
const largeRecordTarget = "kproxy-large-record"

// largeRecordThreshold is that kproxy's threshold_bytes: the record is far
// above it and is offloaded.
const largeRecordThreshold = 1 << 20

// maxLargeRecordBytes is the largest one-shot record: the client's limits
// (twice the record, for the response that carries it) stay within the
// 1 GiB franz-go allows.
const maxLargeRecordBytes = 500 << 20

// LargeRecordResult is the one-shot measurement of -large-messages: one
// record of Bytes produced and then consumed through kproxy, which
// uploads its value to the store and forwards a pointer, then downloads
// and resolves it, against the same bytes uploaded to the store (PUT,
// multipart in parts of PartBytes, as kproxy does) and downloaded from it
// (GET) directly with the AWS SDK. Each repetition does both, in
// alternating order.
type LargeRecordResult struct {
	Bytes       int64  `json:"bytes"`
	PartBytes   int64  `json:"part_bytes"`
	Repetitions int    `json:"repetitions"`
	Upstream    string `json:"upstream"`
	// Skipped, when set, says why nothing was measured.
	Skipped string             `json:"skipped,omitempty"`
	Rounds  []LargeRecordRound `json:"rounds"`
	// Median holds the per-field median over the rounds (peak RSS: the
	// maximum); nil when every round failed.
	Median *LargeRecordRound `json:"median,omitempty"`
	// Ratios compare the medians: produce_vs_put, consume_vs_get, and
	// round_trip_vs_direct (produce+consume over put+get).
	Ratios map[string]float64 `json:"ratios,omitempty"`
	Errors []string           `json:"errors,omitempty"`
}

// LargeRecordRound is one repetition. Seconds are wall-clock time from
// the call to the acknowledgement (produce, PUT) or from asking for the
// record to holding all its bytes (consume, GET).
type LargeRecordRound struct {
	Round          int     `json:"round"`
	ProduceSeconds float64 `json:"produce_s"`
	ConsumeSeconds float64 `json:"consume_s"`
	PutSeconds     float64 `json:"put_s"`
	GetSeconds     float64 `json:"get_s"`
	// kproxy's CPU (utime+stime) while it took the record in and while it
	// handed it out, and its peak RSS (VmHWM) over the round.
	ProxyProduceCPUSeconds float64 `json:"proxy_produce_cpu_s"`
	ProxyConsumeCPUSeconds float64 `json:"proxy_consume_cpu_s"`
	ProxyPeakRSS           int64   `json:"proxy_peak_rss_bytes"`
	LoadAvg1               float64 `json:"loadavg_1m"`
}

// largeRecordLimits are the limits the one-shot kproxy needs: a produce
// request carrying the record is a frame of its size, and the resolved
// fetch response is as large.
func largeRecordLimits(size int64) string {
	frame := size + 16<<20
	return fmt.Sprintf("limits:\n  max_frame_bytes: %d\n  max_buffered_bytes: %d\n", frame, 3*frame)
}

// runLargeRecord is the one-shot measurement, on its own embedded kfake
// cluster (which keeps what is produced) and its own kproxy.
func (r *runner) runLargeRecord(ctx context.Context) *LargeRecordResult {
	o := &r.o
	res := &LargeRecordResult{Bytes: o.LargeRecordBytes, PartBytes: objectstore.DefaultPartSize, Repetitions: o.LargeRecordReps,
		Upstream: "embedded kfake, 1 broker, default message.max.bytes", Rounds: []LargeRecordRound{}}
	topic := o.Topic + "-large"
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic))
	if err != nil {
		res.Skipped = "start embedded kfake: " + err.Error()
		return res
	}
	defer cluster.Close()
	up := &upstream{seeds: cluster.ListenAddrs(), brokers: cluster.ListenAddrs()}
	section := largeMessagesYAML(r.store.endpoint, topic, largeRecordThreshold) + largeRecordLimits(o.LargeRecordBytes)
	t, err := startKproxy(ctx, o, up, largeRecordTarget, r.kproxy, section, nil, r.workDir)
	if err != nil {
		res.Skipped = err.Error()
		return res
	}
	defer t.stop()
	if t.skipped != "" {
		res.Skipped = t.skipped
		return res
	}
	fmt.Fprintf(r.log, "target %s ready (pid %d)\n", largeRecordTarget, t.pid())

	value := make([]byte, o.LargeRecordBytes)
	_, _ = rand.NewChaCha8([32]byte{'k', 'p'}).Read(value)
	want := sha256.Sum256(value)
	producer, err := kgo.NewClient(append(largeClientOpts(t, o.LargeRecordBytes), kgo.DefaultProduceTopic(topic))...)
	if err != nil {
		res.Skipped = err.Error()
		return res
	}
	defer producer.Close()
	// One small record first: connections, metadata and the producer ID
	// are in place before anything is timed.
	if err := producer.ProduceSync(ctx, &kgo.Record{Value: []byte("warm-up")}).FirstErr(); err != nil {
		res.Skipped = "warm-up produce through kproxy: " + err.Error()
		return res
	}
	for round := range o.LargeRecordReps {
		lr := LargeRecordRound{Round: round + 1}
		runtime.GC()
		err := procstat.ResetPeak(t.pid())
		steps := []func() error{
			func() error { return r.largeThroughKproxy(ctx, t, producer, topic, value, want, &lr) },
			func() error { return r.largeDirect(ctx, round, value, want, &lr) },
		}
		if round%2 == 1 { // alternate, so drift in the machine's load falls on both
			steps[0], steps[1] = steps[1], steps[0]
		}
		for _, step := range steps {
			if err == nil {
				err = step()
			}
		}
		if mem, merr := procstat.Mem(t.pid()); merr == nil {
			lr.ProxyPeakRSS = mem.Peak
		}
		lr.LoadAvg1 = loadAvg1()
		if err != nil {
			fmt.Fprintf(r.log, "large record  round %d ERROR %v\n", round+1, err)
			res.Errors = append(res.Errors, fmt.Sprintf("round %d: %v", round+1, err))
			if ctx.Err() != nil {
				break
			}
			continue
		}
		fmt.Fprintf(r.log, "large record  round %d produce %.2fs consume %.2fs | put %.2fs get %.2fs | kproxy CPU %.2fs + %.2fs, peak %s\n",
			round+1, lr.ProduceSeconds, lr.ConsumeSeconds, lr.PutSeconds, lr.GetSeconds, lr.ProxyProduceCPUSeconds, lr.ProxyConsumeCPUSeconds, mib(lr.ProxyPeakRSS))
		res.Rounds = append(res.Rounds, lr)
	}
	res.summarize()
	return res
}

// largeClientOpts let one client carry a record of size bytes each way.
func largeClientOpts(t *target, size int64) []kgo.Opt {
	limit := int32(min(2*size+(1<<20), 1<<30))
	return []kgo.Opt{
		kgo.SeedBrokers(t.seeds...),
		kgo.Dialer(t.dial),
		kgo.ClientID("kproxy-bench"),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerBatchMaxBytes(limit - (1 << 20)),
		kgo.BrokerMaxWriteBytes(limit),
		kgo.BrokerMaxReadBytes(limit),
		kgo.FetchMaxBytes(limit),
		kgo.FetchMaxPartitionBytes(limit),
		kgo.FetchMaxWait(500 * time.Millisecond),
		kgo.ProducerLinger(0),
		// The proxy uploads or downloads the whole value within one
		// request: a loaded machine may take tens of seconds.
		kgo.ProduceRequestTimeout(3 * time.Minute),
		kgo.RequestTimeoutOverhead(3 * time.Minute),
		kgo.RequestRetries(0),
	}
}

// largeThroughKproxy produces value through t, then consumes it back,
// and checks that exactly one object was written to the store and that
// the consumer got the value's bytes.
func (r *runner) largeThroughKproxy(ctx context.Context, t *target, producer *kgo.Client, topic string, value []byte, want [32]byte, lr *LargeRecordRound) error {
	before, err := r.store.objectCount(ctx)
	if err != nil {
		return err
	}
	cpu0, _ := procstat.CPU(t.pid())
	start := time.Now()
	produced, err := producer.ProduceSync(ctx, &kgo.Record{Value: value}).First()
	lr.ProduceSeconds = time.Since(start).Seconds()
	cpu1, _ := procstat.CPU(t.pid())
	lr.ProxyProduceCPUSeconds = (cpu1 - cpu0).Seconds()
	if err != nil {
		return fmt.Errorf("produce %d B through kproxy: %w", len(value), err)
	}
	if after, err := r.store.objectCount(ctx); err != nil {
		return err
	} else if after != before+1 {
		return fmt.Errorf("produce %d B through kproxy wrote %d objects to the store, want 1: not offloaded", len(value), after-before)
	}

	consumer, err := kgo.NewClient(largeClientOpts(t, int64(len(value)))...)
	if err != nil {
		return err
	}
	defer consumer.Close()
	if err := consumer.Ping(ctx); err != nil {
		return fmt.Errorf("consumer through kproxy: %w", err)
	}
	cpu0, _ = procstat.CPU(t.pid())
	start = time.Now()
	consumer.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: {produced.Partition: kgo.NewOffset().At(produced.Offset)}})
	got, err := pollOne(ctx, consumer, produced.Offset)
	lr.ConsumeSeconds = time.Since(start).Seconds()
	cpu1, _ = procstat.CPU(t.pid())
	lr.ProxyConsumeCPUSeconds = (cpu1 - cpu0).Seconds()
	if err != nil {
		return fmt.Errorf("consume through kproxy: %w", err)
	}
	if sha256.Sum256(got.Value) != want || len(got.Headers) != 0 {
		return fmt.Errorf("consumed through kproxy %d B with %d headers, not the %d B produced without headers", len(got.Value), len(got.Headers), len(value))
	}
	return nil
}

// pollOne polls until the record at offset arrives.
func pollOne(ctx context.Context, cl *kgo.Client, offset int64) (*kgo.Record, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("no record at offset %d: %w", offset, ctx.Err())
		}
		var err error
		fetches.EachError(func(_ string, _ int32, e error) { err = errors.Join(err, e) })
		if err != nil {
			return nil, err
		}
		for it := fetches.RecordIter(); !it.Done(); {
			if rec := it.Next(); rec.Offset == offset {
				return rec, nil
			}
		}
	}
}

// largeDirect uploads value to the store and downloads it with the AWS
// SDK, as kproxy's store client does (internal/objectstore), checks the
// bytes and deletes the object.
func (r *runner) largeDirect(ctx context.Context, round int, value []byte, want [32]byte, lr *LargeRecordRound) error {
	key := fmt.Sprintf("kproxy-bench-direct/%d", round+1)
	start := time.Now()
	stored, err := r.store.objects.Put(ctx, key, bytes.NewReader(value), int64(len(value)), "application/octet-stream")
	lr.PutSeconds = time.Since(start).Seconds()
	if err != nil {
		return fmt.Errorf("direct upload: %w", err)
	}
	defer r.store.objects.Delete(context.WithoutCancel(ctx), key)
	if stored.SHA256 != fmt.Sprintf("%x", want) {
		return fmt.Errorf("direct upload: SHA-256 %s, want %x", stored.SHA256, want)
	}
	buf := make([]byte, len(value))
	start = time.Now()
	body, size, err := r.store.objects.Get(ctx, key)
	if err == nil {
		if size != int64(len(buf)) {
			err = fmt.Errorf("size %d, want %d", size, len(buf))
		} else {
			_, err = io.ReadFull(body, buf)
		}
		body.Close()
	}
	lr.GetSeconds = time.Since(start).Seconds()
	if err != nil {
		return fmt.Errorf("direct download: %w", err)
	}
	if sha256.Sum256(buf) != want {
		return errors.New("direct download: the bytes differ from those uploaded")
	}
	return nil
}

// summarize sets the medians and their ratios.
func (res *LargeRecordResult) summarize() {
	if len(res.Rounds) == 0 {
		return
	}
	val := func(f func(*LargeRecordRound) float64) float64 {
		xs := make([]float64, len(res.Rounds))
		for i := range res.Rounds {
			xs[i] = f(&res.Rounds[i])
		}
		return median(xs)
	}
	m := &LargeRecordRound{
		ProduceSeconds:         val(func(l *LargeRecordRound) float64 { return l.ProduceSeconds }),
		ConsumeSeconds:         val(func(l *LargeRecordRound) float64 { return l.ConsumeSeconds }),
		PutSeconds:             val(func(l *LargeRecordRound) float64 { return l.PutSeconds }),
		GetSeconds:             val(func(l *LargeRecordRound) float64 { return l.GetSeconds }),
		ProxyProduceCPUSeconds: val(func(l *LargeRecordRound) float64 { return l.ProxyProduceCPUSeconds }),
		ProxyConsumeCPUSeconds: val(func(l *LargeRecordRound) float64 { return l.ProxyConsumeCPUSeconds }),
		LoadAvg1:               val(func(l *LargeRecordRound) float64 { return l.LoadAvg1 }),
	}
	for _, l := range res.Rounds {
		m.ProxyPeakRSS = max(m.ProxyPeakRSS, l.ProxyPeakRSS)
	}
	res.Median = m
	res.Ratios = map[string]float64{}
	for key, pair := range map[string][2]float64{
		"produce_vs_put":       {m.ProduceSeconds, m.PutSeconds},
		"consume_vs_get":       {m.ConsumeSeconds, m.GetSeconds},
		"round_trip_vs_direct": {m.ProduceSeconds + m.ConsumeSeconds, m.PutSeconds + m.GetSeconds},
	} {
		if pair[0] > 0 && pair[1] > 0 {
			res.Ratios[key] = pair[0] / pair[1]
		}
	}
}
