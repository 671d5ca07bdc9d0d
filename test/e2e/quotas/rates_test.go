package e2equotas

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

// measureFor is how long each client runs.
const measureFor = 20 * time.Second

// valueSize is each record's value: large enough that batch and request
// overhead (which the quota counts, as Kafka's does) is well under 1%.
// Values are random and batches uncompressed: the quota counts bytes on
// the wire, the test counts the values.
const valueSize = 16 << 10

// maxRequestBytes bounds the clients' batches and fetch responses: a
// quota's precision is a request's size against quota × window (a single
// 3 MB fetch response is 1.5 s of a 2 MB/s quota, longer than the span
// the 100 ms windows measure).
const maxRequestBytes = 64 << 10

// randomValue is an incompressible record value.
func randomValue() []byte {
	v := make([]byte, valueSize)
	rand.Read(v)
	return v
}

// ratesPolicy: two users with different produce quotas and one with a
// fetch quota. The windows are Kafka's eleven, of 100 ms rather than the
// broker's 1 s: with 1 s windows a greedy client's first burst may use
// (samples-1) × 1 s of quota at once, and the oscillation that follows has
// a period of about 12 s, so no 20 s measurement is within ±10% of the
// quota (see TestRateGreedyClientAverages and docs/quotas.md); 100 ms
// windows keep the same semantics with a 1.2 s period.
const ratesPolicy = `
policy:
  default: allow
  quota_windows: {samples: 11, size: 100ms}
  quota_audit_sample_rate: 1
  quotas:
    - {name: alice-produce, principals: ["User:alice"], produce_bytes_per_second: 5000000}
    - {name: bob-produce, principals: ["User:bob"], produce_bytes_per_second: 2000000}
    - {name: carol-fetch, principals: ["User:carol"], fetch_bytes_per_second: 2000000}
`

// TestProduceAndFetchQuotas: franz-go producers of two users with
// different produce quotas, and a consumer under a fetch quota, all as fast
// as they can at once for 20 s: each measures its own quota's rate ±10%,
// reports throttle times through its OnBrokerThrottle hook, sees no failed
// request, and nothing is lost (kfake holds every acknowledged record; the
// consumer reads every partition's offsets without a gap).
func TestProduceAndFetchQuotas(t *testing.T) {
	if raceEnabled {
		t.Skip("rates are measured without the race detector, which slows the clients below their quotas: .ci/run runs this test again without -race")
	}
	t.Parallel()
	e := newEnv(t, []string{"alice.t", "bob.t", "carol.t"}, ratesPolicy)
	seedForFetch(t, e, "carol.t", 2_000_000*measureFor.Seconds()*1.5)
	ctx := testkit.Context(t, 2*measureFor)

	var wg sync.WaitGroup
	for _, run := range []func(){
		func() { produceAtQuota(t, e, ctx, "alice", "alice.t", 5_000_000) },
		func() { produceAtQuota(t, e, ctx, "bob", "bob.t", 2_000_000) },
		func() { fetchAtQuota(t, e, ctx, "carol", "carol.t", 2_000_000) },
	} {
		wg.Add(1)
		go func() { defer wg.Done(); run() }()
	}
	wg.Wait()

	for _, c := range []struct{ rule, kind string }{{"alice-produce", "produce"}, {"bob-produce", "produce"}, {"carol-fetch", "fetch"}} {
		if n := testkit.MetricValue(t, e.reg, "kproxy_quota_throttled_requests_total", "quota", c.rule, "kind", c.kind); n == 0 {
			t.Errorf("kproxy_quota_throttled_requests_total{quota=%q} is 0", c.rule)
		}
		if n := testkit.MetricValue(t, e.reg, "kproxy_quota_admitted_bytes_total", "quota", c.rule, "kind", c.kind); n < 20e6 {
			t.Errorf("kproxy_quota_admitted_bytes_total{quota=%q} = %v", c.rule, n)
		}
	}
	e.proxy.Stop() // writes the queued lines
	if !strings.Contains(e.audit.String(t), `"decision":"throttle","quota":"bob-produce","kind":"produce"`) {
		t.Errorf("no audit line for bob's throttled requests at sample rate 1")
	}
}

// produceAtQuota produces to topic as user as fast as franz-go can for
// measureFor and checks the rate against quota.
func produceAtQuota(t *testing.T, e *env, ctx context.Context, user, topic string, quota float64) {
	hook := &throttleHook{}
	cl := e.client(user, kgo.DefaultProduceTopic(topic), kgo.WithHooks(hook),
		kgo.MaxBufferedBytes(4<<20), kgo.ProducerLinger(0), kgo.RecordRetries(0), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerBatchMaxBytes(maxRequestBytes))
	value := randomValue()
	var acked, ackedBytes atomic.Int64
	var failed atomic.Value
	start := time.Now()
	for time.Since(start) < measureFor && ctx.Err() == nil {
		cl.Produce(ctx, &kgo.Record{Value: value}, func(r *kgo.Record, err error) {
			if err != nil {
				failed.CompareAndSwap(nil, err)
				return
			}
			acked.Add(1)
			ackedBytes.Add(int64(len(r.Value)))
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Errorf("%s: flush: %v", user, err)
	}
	elapsed := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		t.Errorf("%s: a produce failed: %v", user, err)
	}
	withinRate(t, user+" produce rate over "+elapsed.Round(time.Millisecond).String(), float64(ackedBytes.Load())/elapsed.Seconds(), quota)
	if hook.count.Load() == 0 || hook.after.Load() == 0 {
		t.Errorf("%s: franz-go reported %v; want throttles applied after the response", user, hook)
	} else {
		t.Logf("%s: %v", user, hook)
	}
	if got := e.records(ctx, topic); got != acked.Load() {
		t.Errorf("%s: kfake holds %d records of %s, %d were acknowledged", user, got, topic, acked.Load())
	}
}

// seedForFetch writes about size bytes of records to topic, straight to
// kfake.
func seedForFetch(t *testing.T, e *env, topic string, size float64) {
	cl := e.direct(kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerBatchMaxBytes(maxRequestBytes)) // a fetch returns at least one whole batch
	value := randomValue()
	ctx := testkit.Context(t, 30*time.Second)
	for i := 0; i < int(size)/valueSize; i++ {
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("seed %s: %v", topic, err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatalf("seed %s: %v", topic, err)
	}
}

// fetchAtQuota consumes topic from the start as user for measureFor, as
// fast as franz-go can, and checks the rate against quota and that each
// partition's offsets come without a gap or repeat.
func fetchAtQuota(t *testing.T, e *env, ctx context.Context, user, topic string, quota float64) {
	hook := &throttleHook{}
	cl := e.client(user, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithHooks(hook),
		kgo.FetchMaxBytes(maxRequestBytes), kgo.FetchMaxPartitionBytes(maxRequestBytes))
	next := map[int32]int64{}
	var consumed int64
	start := time.Now()
	pollCtx, cancel := context.WithDeadline(ctx, start.Add(measureFor))
	defer cancel()
	for pollCtx.Err() == nil {
		fetches := cl.PollFetches(pollCtx)
		fetches.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				t.Errorf("%s: fetch %s/%d: %v", user, topic, p, err)
			}
		})
		fetches.EachRecord(func(r *kgo.Record) {
			if r.Offset != next[r.Partition] {
				t.Errorf("%s: %s/%d offset %d, want %d: a gap or a repeat", user, r.Topic, r.Partition, r.Offset, next[r.Partition])
			}
			next[r.Partition] = r.Offset + 1
			consumed += int64(len(r.Value))
		})
	}
	elapsed := time.Since(start)
	withinRate(t, user+" fetch rate over "+elapsed.Round(time.Millisecond).String(), float64(consumed)/elapsed.Seconds(), quota)
	if hook.count.Load() == 0 {
		t.Errorf("%s: franz-go reported no throttle", user)
	} else {
		t.Logf("%s: %v", user, hook)
	}
}
