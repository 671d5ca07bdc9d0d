package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestLeadershipMovesMidStream moves partition leaders (one partition at a
// time, and all at once) while an idempotent acks=all producer and a
// consumer run through kproxy, and checks that every acknowledged record is
// consumed exactly once: nothing lost, nothing duplicated.
//
// The consumer never resets offsets (NoResetOffset): kfake answers fetches
// right after ShufflePartitionLeaders with leader-epoch errors, and a reset
// to the start would re-read everything and hide both loss and duplicates.
func TestLeadershipMovesMidStream(t *testing.T) {
	t.Parallel()
	t.Run("latest", func(t *testing.T) {
		t.Parallel()
		leadershipMoves(t)
	})
	// Kafka 3.6's protocol: Produce v9 and Fetch v15 are flexible, so the
	// leader endpoints can be encoded (kfake does, kmsg decodes them), but
	// they predate KIP-951's versions.
	t.Run("kafka-3.6-versions", func(t *testing.T) {
		t.Parallel()
		// Without KIP-951 the client finds new leaders by refreshing
		// metadata, at most every MetadataMinAge (5s by default).
		leadershipMoves(t, kgo.MaxVersions(kversion.V3_6_0()), kgo.MetadataMinAge(100*time.Millisecond))
	})
}

func leadershipMoves(t *testing.T, versions ...kgo.Opt) {
	const (
		topic      = "moving"
		partitions = 3
		moves      = 8
	)
	ctx := testkit.Context(t, 90*time.Second)
	e := newEnv(t, "")
	e.createTopic(ctx, topic, partitions)

	consumer := e.client(append(versions,
		kgo.ConsumerGroup("moving-group"),
		kgo.ConsumeTopics(topic),
		// NoResetOffset alone starts at the END of each partition (at -1,
		// despite its doc comment), so the start is spelled out.
		kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchMaxWait(200*time.Millisecond),
	)...)
	var (
		cmu      sync.Mutex
		consumed = map[string]int{}
		fetchErr []error
	)
	consumeDone := make(chan struct{})
	cctx, stopConsumer := context.WithCancel(ctx)
	defer stopConsumer()
	go func() {
		defer close(consumeDone)
		for cctx.Err() == nil {
			fs := consumer.PollFetches(cctx)
			cmu.Lock()
			fs.EachError(func(topic string, p int32, err error) {
				if cctx.Err() == nil {
					fetchErr = append(fetchErr, fmt.Errorf("%s/%d: %w", topic, p, err))
				}
			})
			fs.EachRecord(func(r *kgo.Record) { consumed[string(r.Value)]++ })
			cmu.Unlock()
		}
	}()

	producer := e.client(append(versions,
		kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(time.Millisecond),
	)...)
	var (
		pmu     sync.Mutex
		acked   []string
		where   = map[string]string{}
		failed  []error
		pending sync.WaitGroup
		seq     atomic.Int64
	)
	stopProducing := make(chan struct{})
	produceDone := make(chan struct{})
	go func() {
		defer close(produceDone)
		sem := make(chan struct{}, 200) // bound records in flight
		for {
			select {
			case <-stopProducing:
				return
			case sem <- struct{}{}:
			}
			v := fmt.Sprintf("rec-%07d", seq.Add(1))
			pending.Add(1)
			producer.Produce(ctx, &kgo.Record{Key: []byte(v), Value: []byte(v)}, func(r *kgo.Record, err error) {
				defer pending.Done()
				<-sem
				pmu.Lock()
				defer pmu.Unlock()
				if err != nil {
					failed = append(failed, err)
					return
				}
				acked = append(acked, string(r.Value))
				where[string(r.Value)] = fmt.Sprintf("%d@%d", r.Partition, r.Offset)
			})
		}
	}()

	ackedSoFar := func() int {
		pmu.Lock()
		defer pmu.Unlock()
		return len(acked)
	}
	waitAcked := func(n int) {
		for ackedSoFar() < n {
			if ctx.Err() != nil {
				t.Fatalf("only %d records acknowledged: %v", ackedSoFar(), ctx.Err())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	waitAcked(500)
	leaders := func() []int32 {
		var l []int32
		for p := range int32(partitions) {
			l = append(l, e.cluster.LeaderFor(topic, p))
		}
		return l
	}
	for i := range moves {
		before := leaders()
		if i%2 == 0 {
			p := int32(i/2) % partitions
			to := (before[p] + 1) % 3
			if err := e.cluster.MoveTopicPartition(topic, p, to); err != nil {
				t.Fatalf("move %s/%d to %d: %v", topic, p, to, err)
			}
		} else {
			e.cluster.ShufflePartitionLeaders()
		}
		t.Logf("move %d: leaders %v -> %v", i, before, leaders())
		// Let traffic flow against the new leaders before the next move.
		waitAcked(ackedSoFar() + 300)
	}
	close(stopProducing)
	<-produceDone
	pending.Wait()

	pmu.Lock()
	want := append([]string(nil), acked...)
	if len(failed) > 0 {
		t.Errorf("%d produce failures, first: %v", len(failed), failed[0])
	}
	pmu.Unlock()
	t.Logf("%d records acknowledged", len(want))

	// Wait until every acknowledged record has been consumed.
	deadline := time.Now().Add(30 * time.Second)
	for {
		cmu.Lock()
		missing := 0
		for _, v := range want {
			if consumed[v] == 0 {
				missing++
			}
		}
		errs := append([]error(nil), fetchErr...)
		cmu.Unlock()
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) || len(errs) > 0 {
			cmu.Lock()
			var ex []string
			for _, v := range want {
				if consumed[v] == 0 && len(ex) < 300 {
					ex = append(ex, v+"="+where[v])
				}
			}
			cmu.Unlock()
			t.Logf("missing: %v", ex)
			t.Fatalf("%d of %d acknowledged records never consumed; fetch errors: %v", missing, len(want), errs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // room for duplicates to show up
	stopConsumer()
	<-consumeDone

	cmu.Lock()
	got := make([]string, 0, len(consumed))
	for v, n := range consumed {
		for range n {
			got = append(got, v)
		}
	}
	for _, err := range fetchErr {
		t.Errorf("fetch error: %v", err)
	}
	cmu.Unlock()
	checkExactly(t, "consumed", got, want)

	// KIP-951: a produce or fetch sent to a former leader is answered with
	// NOT_LEADER and the new leader's endpoint.
	var kip951Produce, kip951Fetch int
	for _, a := range e.sniff.Addrs() {
		switch a.APIKey {
		case int16(kmsg.Produce):
			kip951Produce++
		case int16(kmsg.Fetch):
			kip951Fetch++
		}
	}
	t.Logf("KIP-951 leader endpoints seen: %d in Produce responses, %d in Fetch responses", kip951Produce, kip951Fetch)
	if kip951Produce+kip951Fetch == 0 {
		t.Errorf("no KIP-951 leader endpoint reached the client: the moves did not exercise the Produce/Fetch rewrite")
	}
	e.checkAddrs()
}
