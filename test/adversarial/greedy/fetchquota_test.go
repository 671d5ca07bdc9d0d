package greedy

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// Finding: with fetch_bytes_per_second 1 MB/s, a new connection per fetch
// got 200 MB in under 10 s, and 30 fetches written before reading any got
// 30 MB at once. A broker charges the quota entity across all its
// connections and answers a fetch that arrives while the entity is over
// with no records and the throttle time; it reads a muted connection's
// next request only once the throttle is over. Each attack runs for 20 s
// and must get the quota ±10%.

// TestGreedyReconnectingConsumer: a new connection for each fetch, never
// waiting out a throttle.
func TestGreedyReconnectingConsumer(t *testing.T) {
	greedyAttack(t, "reconnect", "a new connection per fetch", func(ctx context.Context, addr string, tally *quotaTally) {
		quotaUntil(ctx, quotaMeasureFor(), func() bool {
			c := quotaDial(t, addr, "greedy")
			defer c.Close()
			if err := tally.fetch(t, c, quotaFetch("reconnect")); err != nil {
				t.Errorf("fetch on a new connection: %v", err)
				return false
			}
			return true
		})
	})
}

// TestGreedyPipeliningConsumer: 30 fetches written before any response is
// read, again and again on one connection.
func TestGreedyPipeliningConsumer(t *testing.T) {
	greedyAttack(t, "pipeline", "30 fetches pipelined at a time", func(ctx context.Context, addr string, tally *quotaTally) {
		c := quotaDial(t, addr, "greedy")
		req := quotaFetch("pipeline")
		quotaUntil(ctx, quotaMeasureFor(), func() bool {
			corrs, err := c.SendPipelined(req, 30)
			if err != nil {
				t.Errorf("write 30 fetches: %v", err)
				return false
			}
			for i, corr := range corrs {
				frame, resp, err := c.Receive(req, corr)
				if err != nil {
					t.Errorf("pipelined fetch %d: %v", i+1, err)
					return false
				}
				tally.note(t, frame, resp.(*kmsg.FetchResponse))
			}
			return true
		})
	})
}

// TestGreedyParallelConsumer: 8 connections of the same client fetching
// at once, none waiting out a throttle.
func TestGreedyParallelConsumer(t *testing.T) {
	greedyAttack(t, "parallel", "8 parallel connections", func(ctx context.Context, addr string, tally *quotaTally) {
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			c := quotaDial(t, addr, "greedy")
			wg.Add(1)
			go func() {
				defer wg.Done()
				req := quotaFetch("parallel")
				quotaUntil(ctx, quotaMeasureFor(), func() bool {
					if err := tally.fetch(t, c, req); err != nil {
						t.Errorf("connection %d: %v", i, err)
						return false
					}
					return true
				})
			}()
		}
		wg.Wait()
	})
}

// greedyAttack runs attack as client greedy, from addr, a kproxy holding
// it to the fetch quota in front of topic, and checks that what it got
// over the attack (which runs for quotaMeasureFor) is the quota ±10%.
func greedyAttack(t *testing.T, topic, what string, attack func(ctx context.Context, addr string, tally *quotaTally)) {
	t.Parallel()
	addr := quotaTarget(t, "greedy", topic, 1, 4*quotaFetchBytes)
	ctx := testkit.Context(t, 2*quotaMeasureFor()+30*time.Second)
	var tally quotaTally
	start := time.Now()
	attack(ctx, addr, &tally)
	tally.check(t, what, time.Since(start))
}

// TestPoliteConsumerUnderFetchQuota: a well-behaved franz-go consumer
// under the same quota keeps its rate (the quota ±10%) and loses
// nothing: every partition's offsets come in order, without a gap or a
// repeat, although kproxy answers some of its fetches empty.
func TestPoliteConsumerUnderFetchQuota(t *testing.T) {
	t.Parallel()
	const partitions = 3
	perPartition := int(1.5 * quotaRate * quotaMeasureFor().Seconds() / partitions)
	addr := quotaTarget(t, "polite", "polite", partitions, perPartition)
	ctx := testkit.Context(t, 2*quotaMeasureFor()+30*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("polite"), kgo.ConsumeTopics("polite"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(64<<10), kgo.FetchMaxPartitionBytes(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	next := map[int32]int64{}
	var consumed int64
	start := time.Now()
	pollCtx, cancel := context.WithDeadline(ctx, start.Add(quotaMeasureFor()))
	defer cancel()
	for pollCtx.Err() == nil {
		fetches := cl.PollFetches(pollCtx)
		fetches.EachError(func(topic string, p int32, err error) {
			if pollCtx.Err() == nil {
				t.Errorf("consume %s/%d: %v", topic, p, err)
			}
		})
		fetches.EachRecord(func(r *kgo.Record) {
			if r.Offset != next[r.Partition] {
				t.Errorf("partition %d: offset %d, want %d (a record lost or repeated)", r.Partition, r.Offset, next[r.Partition])
			}
			next[r.Partition] = r.Offset + 1
			consumed += int64(len(r.Value))
		})
	}
	t.Logf("polite consumer: offsets reached %v", next)
	// Record values are the response bytes less the batches' and the
	// responses' overhead: about 1% with 16 kB records.
	quotaCheckRate(t, "polite consumer's record values", float64(consumed), time.Since(start))
	if len(next) == 0 {
		t.Error("nothing consumed")
	}
}
