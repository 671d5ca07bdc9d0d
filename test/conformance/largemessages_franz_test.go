package conformance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

// franz-go's producer and consumer for the large-messages scenario.

func init() {
	register("franz-go", scenarioLargeMessages, func(t *testing.T, c *cellCtx, e *env) {
		lmRoundTrip(t, c, e, lmClient{
			produce: func(t *testing.T, topic, txnID string, plan []lmBatch) []lmDigest {
				return franzLMProduce(t, e.lm.BootstrapAddr(), topic, txnID, plan)
			},
			consume: func(t *testing.T, topic string, n int, readCommitted bool) []lmDigest {
				return franzLMConsume(t, e.lm.BootstrapAddr(), topic, n, readCommitted)
			},
		})
	})
}

// franzLMOpts are franz-go's settings for 500 MiB records
// (docs/large-messages.md, "Client settings"): batches, requests and
// responses up to lmRequestBytes, and a request timeout that allows kproxy
// to upload or download the value before it answers.
func franzLMOpts(addr string) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(addr),
		kgo.ProducerBatchMaxBytes(lmRequestBytes),
		kgo.BrokerMaxWriteBytes(lmRequestBytes + 1<<20),
		kgo.BrokerMaxReadBytes(lmRequestBytes + 1<<20),
		kgo.FetchMaxBytes(lmRequestBytes),
		kgo.FetchMaxPartitionBytes(lmRequestBytes),
		kgo.ProduceRequestTimeout(5 * time.Minute),
		kgo.RequestTimeoutOverhead(5 * time.Minute),
	}
}

// franzLMProduce produces plan one record at a time (idempotent, acks=all:
// kgo's defaults), each value random bytes made just before it is sent.
func franzLMProduce(t *testing.T, addr, topic, txnID string, plan []lmBatch) []lmDigest {
	t.Helper()
	opts := franzLMOpts(addr)
	if txnID != "" {
		opts = append(opts, kgo.TransactionalID(txnID), kgo.TransactionTimeout(5*time.Minute))
	}
	cl := testkit.Client(t, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rng := rand.NewChaCha8(sha256.Sum256([]byte(topic + txnID)))
	var out []lmDigest
	for _, b := range plan {
		if b.end != "" {
			if err := cl.BeginTransaction(); err != nil {
				t.Fatalf("franz-go begin transaction: %v", err)
			}
		}
		for _, r := range b.recs {
			value := make([]byte, r.size)
			rng.Read(value)
			sum := sha256.Sum256(value)
			rec := &kgo.Record{Topic: topic, Key: []byte(r.key), Value: value,
				Headers: []kgo.RecordHeader{{Key: lmHeader, Value: []byte(r.key)}}}
			if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
				t.Fatalf("franz-go produce %s: %v", r.key, err)
			}
			out = append(out, lmDigest{key: r.key, size: r.size, sha: hex.EncodeToString(sum[:])})
		}
		if b.end != "" {
			if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(b.end == "commit")); err != nil {
				t.Fatalf("franz-go %s transaction: %v", b.end, err)
			}
		}
	}
	return out
}

// franzLMConsume reads the first n records of topic's partition 0.
func franzLMConsume(t *testing.T, addr, topic string, n int, readCommitted bool) []lmDigest {
	t.Helper()
	iso := kgo.ReadUncommitted()
	if readCommitted {
		iso = kgo.ReadCommitted()
	}
	cl := testkit.Client(t, append(franzLMOpts(addr), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(iso),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))...)
	defer cl.Close() // before the next consumer: each holds up to a fetch
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var got []lmDigest
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("franz-go consumed %d of %d records: %v", len(got), n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("franz-go fetch %s/%d: %v", topic, p, err) })
		for _, r := range fs.Records() {
			got = append(got, lmDigestOf(string(r.Key), r.Value, r.Headers))
		}
	}
	return got
}

// lmDigestOf is a consumed record's digest.
func lmDigestOf(key string, value []byte, headers []kgo.RecordHeader) lmDigest {
	sum := sha256.Sum256(value)
	h := ""
	for i, hd := range headers {
		if i > 0 {
			h += ","
		}
		h += hd.Key + "=" + string(hd.Value)
	}
	return lmDigest{key: key, size: len(value), sha: hex.EncodeToString(sum[:]), headers: h}
}
