package conformance

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// throttleHook counts what franz-go's OnBrokerThrottle hook reports.
type throttleHook struct {
	n          atomic.Int64
	total, max atomic.Int64 // nanoseconds
}

func (h *throttleHook) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	h.n.Add(1)
	h.total.Add(int64(d))
	for m := h.max.Load(); int64(d) > m && !h.max.CompareAndSwap(m, int64(d)); m = h.max.Load() {
	}
}

// check fails t unless the hook saw throttling; it notes what it saw.
func (h *throttleHook) check(t *testing.T, c *cellCtx, what string) {
	t.Helper()
	n := h.n.Load()
	if n == 0 {
		t.Errorf("%s: franz-go's OnBrokerThrottle hook never reported throttle time", what)
		return
	}
	c.note("%s: OnBrokerThrottle %d times, %s in all, at most %s", what, n,
		time.Duration(h.total.Load()).Round(time.Millisecond), time.Duration(h.max.Load()).Round(time.Millisecond))
}

// franzQuotaOpts: no compression (quotas count wire bytes), the request
// sizes of quota_test.go, and 8 MB buffered at most (what is buffered when
// the window closes is flushed under the quota).
func franzQuotaOpts(seed, clientID string) []kgo.Opt {
	return []kgo.Opt{kgo.SeedBrokers(seed), kgo.ClientID(clientID), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.MaxBufferedBytes(8 << 20),
		kgo.ProducerBatchMaxBytes(quotaBatchBytes), kgo.FetchMaxBytes(quotaFetchMaxBytes), kgo.FetchMaxPartitionBytes(quotaFetchPartitionBytes)}
}

func franzQuotaProduce(t *testing.T, c *cellCtx, q *quotaEnv, topic string) int64 {
	return q.franzProduceUnder(t, c, "franz-go produce", topic, produceQuota, franzQuotaOpts(q.quotas.BootstrapAddr(), quotaClientID("franz-go"))...)
}

// franzProduceUnder produces to topic as fast as franz-go can (acks=all,
// idempotent: kgo's defaults) until the measuring window has closed, then
// checks the rate, the hook, errors and the log; it returns the records
// acknowledged. It reports with t.Errorf only, so that it can run in a
// goroutine.
func (q *quotaEnv) franzProduceUnder(t *testing.T, c *cellCtx, what, topic string, quota float64, opts ...kgo.Opt) int64 {
	t.Helper()
	h := &throttleHook{}
	cl, err := kgo.NewClient(append(opts, kgo.WithHooks(h))...)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return 0
	}
	defer cl.Close()
	tr, stopTrace := q.traceLog(t, topic)
	var acked, failed atomic.Int64
	var firstErr atomic.Value
	var stop atomic.Bool
	done := make(chan struct{})
	payloads := quotaPayloads()
	go func() {
		defer close(done)
		// Produce blocks while kgo's buffer is full: that is the client
		// going as fast as its quota lets it.
		for i := 0; !stop.Load(); i++ {
			cl.Produce(context.Background(), &kgo.Record{Topic: topic, Value: payloads[i%len(payloads)]}, func(_ *kgo.Record, err error) {
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					return
				}
				acked.Add(1)
			})
		}
	}()
	waitWindow(tr, quotaRunTimeout, nil)
	stop.Store(true)
	<-done
	fctx, fcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer fcancel()
	if err := cl.Flush(fctx); err != nil {
		t.Errorf("%s: flush: %v", what, err)
	}
	time.Sleep(300 * time.Millisecond) // one more sample of the log
	stopTrace()
	if n := failed.Load(); n > 0 {
		t.Errorf("%s: %d records failed: %v", what, n, firstErr.Load())
	}
	checkRate(t, c, what, tr, quota)
	h.check(t, c, what)
	q.checkLog(t, what, topic, acked.Load())
	return acked.Load()
}

// checkLog fails t unless topic holds exactly the n records acknowledged.
func (q *quotaEnv) checkLog(t *testing.T, what, topic string, n int64) {
	t.Helper()
	ctx, cancel := ctxTimeout(20 * time.Second)
	defer cancel()
	inLog, err := logEnd(ctx, q.admin(t), topic)
	if err != nil {
		t.Errorf("%s: log-end offsets: %v", what, err)
	} else if inLog != n {
		t.Errorf("%s: %d records acknowledged but %d in the log", what, n, inLog)
	}
}

// franzQuotaFetch consumes topic's n records from the start (no group)
// under fetchQuota and checks each was read exactly once.
func franzQuotaFetch(t *testing.T, c *cellCtx, q *quotaEnv, topic string, n int64) {
	const what = "franz-go fetch"
	h := &throttleHook{}
	cl, err := kgo.NewClient(append(franzQuotaOpts(q.quotas.BootstrapAddr(), quotaClientID("franz-go")),
		kgo.WithHooks(h), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	tr := &rateTrace{}
	tr.add(time.Now(), 0)
	seen := make(map[[2]int64]bool, n)
	var bytes int64
	ctx, cancel := context.WithTimeout(context.Background(), quotaRunTimeout)
	defer cancel()
	for int64(len(seen)) < n && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachError(func(topic string, p int32, err error) {
			if ctx.Err() == nil {
				t.Errorf("%s: fetch %s/%d: %v", what, topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			k := [2]int64{int64(r.Partition), r.Offset}
			if seen[k] {
				t.Errorf("%s: %d/%d delivered twice", what, r.Partition, r.Offset)
			}
			seen[k] = true
			bytes += int64(len(r.Value))
		})
		tr.add(time.Now(), bytes)
		if t.Failed() {
			return
		}
	}
	if int64(len(seen)) != n {
		t.Errorf("%s: consumed %d of %d records within %s", what, len(seen), n, quotaRunTimeout)
	}
	checkRate(t, c, what, tr, fetchQuota)
	h.check(t, c, what)
}

// franzQuotaPrincipals: alice and bob (SASL/SCRAM, terminated by kproxy)
// produce at once, each as fast as it can; each gets its own quota.
func franzQuotaPrincipals(t *testing.T, c *cellCtx, q *quotaEnv) {
	type principal struct {
		user, pass string
		quota      float64
	}
	ps := []principal{{saslUser, saslPass, aliceQuota}, {saslUser2, saslPass2, bobQuota}}
	topics := make([]string, len(ps))
	for i, p := range ps {
		topics[i] = q.newQuotaTopic(t, &cellCtx{key: cellKey{c.key.upstream, c.key.client, c.key.scenario + "-" + p.user}})
	}
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			what := "franz-go produce as User:" + p.user
			q.franzProduceUnder(t, c, what, topics[i], p.quota, append(franzQuotaOpts(q.principals.BootstrapAddr(), quotaClientID(p.user)),
				kgo.DialTLSConfig(clientTLS(t, q.env)), kgo.SASL(scram.Auth{User: p.user, Pass: p.pass}.AsSha512Mechanism()))...)
		}()
	}
	wg.Wait()
}
