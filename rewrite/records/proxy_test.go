package records_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/rewrite/records"
)

// reverseProduce is a kproxy filter that reverses the value of every
// produced record, with a Rewriter per concurrent request as a real
// filter keeps them.
type reverseProduce struct{ rewriters *sync.Pool }

func newReverseProduce() reverseProduce {
	return reverseProduce{&sync.Pool{New: func() any { return records.NewRewriter(1 << 20) }}}
}

func (f reverseProduce) Register(r *filter.Registry) { filter.OnRequest(r, f.produce) }

func (f reverseProduce) produce(_ *filter.Conn, req *kmsg.ProduceRequest) filter.Verdict {
	rw := f.rewriters.Get().(*records.Rewriter)
	defer f.rewriters.Put(rw)
	fn := reverseValues()
	for ti := range req.Topics {
		for pi := range req.Topics[ti].Partitions {
			p := &req.Topics[ti].Partitions[pi]
			out, _, err := rw.Rewrite(nil, p.Records, fn)
			if err != nil {
				return filter.Verdict{Close: err}
			}
			p.Records = out
		}
	}
	return filter.Verdict{Modified: true}
}

// proxied starts kfake and an in-process kproxy in front of it with the
// reverseProduce filter; it returns the cluster and kproxy's bootstrap.
func proxied(t *testing.T) (*kfake.Cluster, string) {
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(2, topic))
	kp := kproxytest.Start(t, testkit.Config{Upstream: cluster.ListenAddrs()}.YAML(), kproxytest.WithFilters(newReverseProduce()))
	return cluster, kp.BootstrapAddr()
}

// consumeValues reads n records of topic from cluster directly, with
// opts, and returns their values per partition in offset order.
func consumeValues(t *testing.T, ctx context.Context, cluster *kfake.Cluster, n int, opts ...kgo.Opt) map[int32][]string {
	t.Helper()
	cl := testkit.Client(t, append(opts, kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics(topic))...)
	got := map[int32][]string{}
	for seen := 0; seen < n; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume after %d records: %v", seen, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = append(got[r.Partition], string(r.Value))
			seen++
		})
	}
	// Nothing more than expected arrives.
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if extra := cl.PollFetches(short).NumRecords(); extra > 0 {
		t.Errorf("%d records more than the %d expected", extra, n)
	}
	return got
}

func value(i int) string { return "value-" + string(rune('a'+i%26)) + string(rune('0'+i%10)) }

// TestIdempotentProducerThroughRewrite: an idempotent franz-go producer
// writes through a kproxy whose filter rewrites every batch; the broker
// accepts each batch's sequence numbers (no OUT_OF_ORDER_SEQUENCE), and a
// consumer of the broker reads the rewritten values in order.
func TestIdempotentProducerThroughRewrite(t *testing.T) {
	for _, c := range testkit.Codecs() {
		t.Run(c.Name, func(t *testing.T) {
			cluster, bootstrap := proxied(t)
			producer := testkit.Client(t, kgo.SeedBrokers(bootstrap), kgo.ProducerBatchCompression(c.Codec),
				kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
			ctx := testkit.Context(t, 30*time.Second)
			want := map[int32][]string{}
			for round := range 3 {
				var rs []*kgo.Record
				for i := range 20 {
					p := int32(i % 2)
					v := value(round*20 + i)
					rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)})
					want[p] = append(want[p], string(reversed([]byte(v))))
				}
				if err := producer.ProduceSync(ctx, rs...).FirstErr(); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
			}
			got := consumeValues(t, ctx, cluster, 60)
			for p := range int32(2) {
				if g, w := got[p], want[p]; !slices.Equal(g, w) {
					t.Errorf("partition %d: got %q, want %q", p, g, w)
				}
			}
		})
	}
}

// TestTransactionalProducerThroughRewrite: a transactional producer
// writes through the rewriting kproxy, committing, aborting, committing;
// a read_committed consumer of the broker reads exactly the committed
// records, rewritten.
func TestTransactionalProducerThroughRewrite(t *testing.T) {
	for _, c := range testkit.Codecs() {
		t.Run(c.Name, func(t *testing.T) {
			cluster, bootstrap := proxied(t)
			producer := testkit.Client(t, kgo.SeedBrokers(bootstrap), kgo.ProducerBatchCompression(c.Codec),
				kgo.TransactionalID("rewrite-"+c.Name), kgo.RecordPartitioner(kgo.ManualPartitioner()))
			ctx := testkit.Context(t, 30*time.Second)
			var want []string
			for round, commit := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort, kgo.TryCommit} {
				if err := producer.BeginTransaction(); err != nil {
					t.Fatal(err)
				}
				var rs []*kgo.Record
				for i := range 10 {
					v := value(round*10 + i)
					rs = append(rs, &kgo.Record{Topic: topic, Value: []byte(v)})
					if commit == kgo.TryCommit {
						want = append(want, string(reversed([]byte(v))))
					}
				}
				if err := producer.ProduceSync(ctx, rs...).FirstErr(); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if err := producer.EndTransaction(ctx, commit); err != nil {
					t.Fatalf("round %d: end: %v", round, err)
				}
			}
			got := consumeValues(t, ctx, cluster, len(want), kgo.FetchIsolationLevel(kgo.ReadCommitted()))[0]
			if !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}
