package e2ereplicas

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// stream is franz-go's idempotent producer and a NoResetOffset group
// consumer of one topic through the balancer, from clientIP: a record
// every 5 ms until finish, each acknowledgement and consumed record
// stamped with its time.
type stream struct {
	t                    *testing.T
	producer, consumer   *kgo.Client
	stopProducing        chan struct{}
	producing, consuming chan struct{}
	stopConsuming        context.CancelFunc

	mu              sync.Mutex
	acked, consumed []stamped
	failures        []error
}

func startStream(t *testing.T, ctx context.Context, seed, topic string) *stream {
	t.Helper()
	base := []kgo.Opt{kgo.SeedBrokers(seed), kgo.Dialer(clientDialer),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond })}
	s := &stream{t: t, stopProducing: make(chan struct{}), producing: make(chan struct{}), consuming: make(chan struct{})}
	var err error
	if s.producer, err = kgo.NewClient(append(base, kgo.DefaultProduceTopic(topic), kgo.RecordDeliveryTimeout(60*time.Second))...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.producer.Close)
	if s.consumer, err = kgo.NewClient(append(base, kgo.ConsumeTopics(topic), kgo.ConsumerGroup(topic+".g"),
		// NoResetOffset alone starts a new group at the END of each
		// partition (at -1, despite its doc comment): a consumer that
		// joins after the first acks would skip them. Start is spelled out.
		kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()), kgo.FetchMaxWait(200*time.Millisecond))...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.consumer.Close)
	cctx, cancel := context.WithCancel(ctx)
	s.stopConsuming = cancel
	go s.produce(ctx)
	go s.consume(cctx)
	return s
}

func (s *stream) produce(ctx context.Context) {
	defer close(s.producing)
	for i := 0; ; i++ {
		select {
		case <-s.stopProducing:
			return
		case <-time.After(5 * time.Millisecond):
		}
		value := fmt.Sprintf("r%06d", i)
		s.producer.Produce(ctx, &kgo.Record{Value: []byte(value)}, func(r *kgo.Record, err error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			if err != nil {
				s.failures = append(s.failures, err)
				return
			}
			s.acked = append(s.acked, stamped{value, r.Partition, r.Offset, time.Now()})
		})
	}
}

func (s *stream) consume(ctx context.Context) {
	defer close(s.consuming)
	for ctx.Err() == nil {
		fs := s.consumer.PollFetches(ctx)
		fs.EachError(func(topic string, part int32, err error) {
			if ctx.Err() == nil {
				s.t.Logf("consumer: fetch %s/%d: %v", topic, part, err)
			}
		})
		now := time.Now()
		s.mu.Lock()
		fs.EachRecord(func(r *kgo.Record) {
			s.consumed = append(s.consumed, stamped{string(r.Value), r.Partition, r.Offset, now})
		})
		s.mu.Unlock()
	}
}

// finish stops producing, waits until every record in flight is
// acknowledged or failed, consumes until every acknowledged record was
// consumed or within has passed, and stops consuming.
func (s *stream) finish(ctx context.Context, within time.Duration) {
	s.t.Helper()
	close(s.stopProducing)
	<-s.producing
	if err := s.producer.Flush(ctx); err != nil {
		s.t.Fatalf("flush: %v", err)
	}
	for deadline := time.Now().Add(within); s.missing() > 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	s.stopConsuming()
	<-s.consuming
}

// missing counts the acknowledged records not consumed (yet).
func (s *stream) missing() int { return len(s.notConsumed()) }

// notConsumed is every acknowledged record not consumed (yet).
func (s *stream) notConsumed() []stamped {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[string]bool, len(s.consumed))
	for _, c := range s.consumed {
		seen[c.value] = true
	}
	var out []stamped
	for _, a := range s.acked {
		if !seen[a.value] {
			out = append(out, a)
		}
	}
	return out
}

// explainMissing logs where the acknowledged records that were not
// consumed sit, against the highest offset consumed from their partition:
// below it, the consumer skipped them; above it, consumption stalled.
func (s *stream) explainMissing() {
	missing := s.notConsumed()
	s.mu.Lock()
	highest := map[int32]int64{}
	for _, c := range s.consumed {
		highest[c.partition] = max(highest[c.partition], c.offset)
	}
	s.mu.Unlock()
	for i, m := range missing {
		if i == 10 {
			s.t.Logf("... and %d more", len(missing)-i)
			break
		}
		s.t.Logf("not consumed: %s partition %d offset %d, acked at %s; highest offset consumed from that partition %d",
			m.value, m.partition, m.offset, m.at.Format("15:04:05.000"), highest[m.partition])
	}
}

// pauses is the longest pause in acknowledgements and in consumption
// within window after at.
func (s *stream) pauses(at time.Time, window time.Duration) (acks, consumption time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return longestGap(times(s.acked), at, window).Round(time.Millisecond), longestGap(times(s.consumed), at, window).Round(time.Millisecond)
}

// stamped is a record value, where it is, and when it was acknowledged
// or consumed.
type stamped struct {
	value     string
	partition int32
	offset    int64
	at        time.Time
}

// longestGap is the longest time without an event in events (sorted by
// time) between from and from+window, counting from from.
func longestGap(events []time.Time, from time.Time, window time.Duration) time.Duration {
	last, gap := from, time.Duration(0)
	for _, at := range events {
		if at.Before(from) {
			continue
		}
		if at.After(from.Add(window)) {
			break
		}
		gap = max(gap, at.Sub(last))
		last = at
	}
	return max(gap, min(time.Since(last), from.Add(window).Sub(last)))
}

func times(s []stamped) []time.Time {
	out := make([]time.Time, len(s))
	for i, x := range s {
		out[i] = x.at
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}
