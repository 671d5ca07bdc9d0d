package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestRoundTripClassicGroup: produce 10,000 keyed records through kproxy,
// consume them with a classic (JoinGroup/SyncGroup) consumer group, commit,
// and resume from the commit with a new member.
func TestRoundTripClassicGroup(t *testing.T) {
	t.Parallel()
	roundTrip(t, false)
}

// TestRoundTripNextGenGroup is the same with the KIP-848 consumer group
// protocol (ConsumerGroupHeartbeat), which kgo enables with
// kgo.ServerSideBalancer() and kfake serves without options.
func TestRoundTripNextGenGroup(t *testing.T) {
	t.Parallel()
	roundTrip(t, true)
}

type ack struct {
	partition int32
	offset    int64
}

func roundTrip(t *testing.T, nextGen bool) {
	const (
		topic      = "orders"
		partitions = 6
		first      = 10000
		more       = 1000
		group      = "round-trip"
	)
	ctx := testkit.Context(t, 90*time.Second)
	e := newEnv(t, "")
	e.createTopic(ctx, topic, partitions)

	producer := e.client(
		kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()), // the default, spelled out
	)
	acks := produceKeyed(ctx, t, producer, 0, first)
	if n := e.sniff.Requests(int16(kmsg.InitProducerID)); n == 0 {
		t.Errorf("producer sent no InitProducerID: it is not idempotent")
	}
	usedPartitions := map[int32]bool{}
	for _, a := range acks {
		usedPartitions[a.partition] = true
	}
	if len(usedPartitions) != partitions {
		t.Errorf("records landed in %d partitions, want all %d", len(usedPartitions), partitions)
	}

	groupOpts := []kgo.Opt{
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}
	if nextGen {
		groupOpts = append(groupOpts, kgo.ServerSideBalancer())
	}

	// First member: everything, in order, then commit and leave.
	c1 := e.client(groupOpts...)
	got := pollN(ctx, t, c1, first)
	checkConsumed(t, got, acks, 0, first)
	noMoreRecords(t, c1, 300*time.Millisecond)
	if err := c1.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	c1.Close()

	// Second member of the same group resumes from the commit.
	c2 := e.client(groupOpts...)
	more2 := produceKeyed(ctx, t, producer, first, more)
	got = pollN(ctx, t, c2, more)
	checkConsumed(t, got, more2, first, more)
	noMoreRecords(t, c2, 500*time.Millisecond)

	join := e.sniff.Responses(int16(kmsg.JoinGroup))
	hb848 := e.sniff.Responses(int16(kmsg.ConsumerGroupHeartbeat))
	if nextGen {
		if hb848 == 0 || join != 0 {
			t.Errorf("next-gen group: %d ConsumerGroupHeartbeat and %d JoinGroup responses; want >0 and 0", hb848, join)
		}
	} else if join == 0 || hb848 != 0 {
		t.Errorf("classic group: %d JoinGroup and %d ConsumerGroupHeartbeat responses; want >0 and 0", join, hb848)
	}
	if e.sniff.Responses(int16(kmsg.OffsetCommit)) == 0 {
		t.Errorf("no OffsetCommit response seen")
	}
	e.checkAddrs()
}

func key(i int) string   { return fmt.Sprintf("key-%06d", i) }
func value(i int) string { return fmt.Sprintf("value-%06d-%s", i, strings.Repeat("x", i%37)) }

// produceKeyed produces records [from, from+n) with keys key(i) and values
// value(i), and returns where each landed, by key.
func produceKeyed(ctx context.Context, t *testing.T, cl *kgo.Client, from, n int) map[string]ack {
	t.Helper()
	var (
		mu   sync.Mutex
		acks = make(map[string]ack, n)
		errs []error
		wg   sync.WaitGroup
	)
	for i := from; i < from+n; i++ {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Key: []byte(key(i)), Value: []byte(value(i))}, func(r *kgo.Record, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			acks[string(r.Key)] = ack{r.Partition, r.Offset}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d produce errors, first: %v", len(errs), errs[0])
	}
	if len(acks) != n {
		t.Fatalf("%d records acknowledged, want %d", len(acks), n)
	}
	return acks
}

// pollN polls until n records arrived (or ctx ends) and returns them.
func pollN(ctx context.Context, t *testing.T, cl *kgo.Client, n int) []*kgo.Record {
	t.Helper()
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records: %v", len(got), n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Errorf("fetch %s/%d: %v", topic, p, err) })
		got = append(got, fs.Records()...)
	}
	return got
}

// checkConsumed asserts got holds exactly the records [from, from+n), each
// with its key's value at the partition and offset its produce was
// acknowledged at, and that each partition's records came in produce order.
func checkConsumed(t *testing.T, got []*kgo.Record, acks map[string]ack, from, n int) {
	t.Helper()
	if len(got) != n {
		t.Errorf("consumed %d records, want %d", len(got), n)
	}
	seen := map[string]int{}
	lastSeq := map[int32]int{}
	lastOff := map[int32]int64{}
	bad := 0
	report := func(format string, args ...any) {
		if bad++; bad <= 10 {
			t.Errorf(format, args...)
		}
	}
	for _, r := range got {
		k := string(r.Key)
		seen[k]++
		if seen[k] > 1 {
			report("key %s consumed %d times", k, seen[k])
			continue
		}
		i, err := strconv.Atoi(strings.TrimPrefix(k, "key-"))
		if err != nil || i < from || i >= from+n {
			report("unexpected key %q", k)
			continue
		}
		if string(r.Value) != value(i) {
			report("key %s has value %q, want %q", k, r.Value, value(i))
		}
		if a, ok := acks[k]; !ok || a.partition != r.Partition || a.offset != r.Offset {
			report("key %s consumed at %d@%d, produce acknowledged %d@%d", k, r.Partition, r.Offset, a.partition, a.offset)
		}
		if prev, ok := lastSeq[r.Partition]; ok && (i <= prev || r.Offset <= lastOff[r.Partition]) {
			report("partition %d out of order: key %d at offset %d after key %d at offset %d",
				r.Partition, i, r.Offset, prev, lastOff[r.Partition])
		}
		lastSeq[r.Partition], lastOff[r.Partition] = i, r.Offset
	}
	for k := range acks {
		if seen[k] == 0 {
			report("key %s produced but never consumed", k)
		}
	}
	if bad > 10 {
		t.Errorf("... %d problems in all", bad)
	}
}
