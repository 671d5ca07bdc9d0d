package e2eclients

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

func saramaConfig(version sarama.KafkaVersion) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "kproxy-e2e-sarama"
	cfg.Version = version
	cfg.Metadata.RefreshFrequency = 0
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Idempotent = true
	cfg.Producer.Return.Successes = true
	cfg.Producer.Retry.Max = 5
	cfg.Producer.Retry.Backoff = 50 * time.Millisecond
	cfg.Net.MaxOpenRequests = 1
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = true
	cfg.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	cfg.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
	cfg.Consumer.Group.Rebalance.Retry.Backoff = 100 * time.Millisecond
	return cfg
}

// seqOf is the record number in a value "<prefix>-value-<n>".
func seqOf(t *testing.T, value string) int {
	t.Helper()
	i := strings.LastIndexByte(value, '-')
	n, err := strconv.Atoi(value[i+1:])
	if err != nil {
		t.Fatalf("value %q has no sequence number", value)
	}
	return n
}

// groupCollector is a sarama ConsumerGroupHandler that keeps every message,
// marks it for commit, and signals once it has want messages.
type groupCollector struct {
	t    *testing.T
	want int

	mu   sync.Mutex
	msgs []*sarama.ConsumerMessage
	done chan struct{}
	once sync.Once
}

func newGroupCollector(t *testing.T, want int) *groupCollector {
	return &groupCollector{t: t, want: want, done: make(chan struct{})}
}

func (*groupCollector) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (*groupCollector) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *groupCollector) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		h.mu.Lock()
		h.msgs = append(h.msgs, msg)
		n := len(h.msgs)
		h.mu.Unlock()
		sess.MarkMessage(msg, "")
		if n >= h.want {
			h.once.Do(func() { close(h.done) })
		}
	}
	return nil
}

func (h *groupCollector) records() []record {
	h.mu.Lock()
	defer h.mu.Unlock()
	rs := make([]record, len(h.msgs))
	for i, m := range h.msgs {
		rs[i] = record{key: string(m.Key), value: string(m.Value)}
	}
	return rs
}

// checkOrder fails unless, in each partition, offsets strictly increase and
// so do the producer's sequence numbers.
func (h *groupCollector) checkOrder() {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	type last struct {
		offset int64
		seq    int
	}
	lasts := map[int32]last{}
	for _, m := range h.msgs {
		seq := seqOf(h.t, string(m.Value))
		if l, ok := lasts[m.Partition]; ok && (m.Offset <= l.offset || seq <= l.seq) {
			h.t.Errorf("partition %d: offset %d seq %d after offset %d seq %d", m.Partition, m.Offset, seq, l.offset, l.seq)
		}
		lasts[m.Partition] = last{m.Offset, seq}
	}
	if len(lasts) < 2 {
		h.t.Errorf("records came from %d partitions; keys should spread them", len(lasts))
	}
}

// consumeGroup runs one consumer group session (its own client) until it
// has want messages, then closes it, which commits the marked offsets.
func (e *env) saramaConsumeGroup(version sarama.KafkaVersion, group, topic string, want int) *groupCollector {
	t := e.t
	t.Helper()
	client, err := sarama.NewClient([]string{e.bootstrap()}, saramaConfig(version))
	if err != nil {
		t.Fatalf("sarama client: %v", err)
	}
	defer client.Close()
	cg, err := sarama.NewConsumerGroupFromClient(group, client)
	if err != nil {
		t.Fatalf("sarama consumer group: %v", err)
	}
	h := newGroupCollector(t, want)
	ctx, cancel := context.WithCancel(context.Background())
	consumed := make(chan error, 1)
	go func() {
		var err error
		for ctx.Err() == nil {
			if err = cg.Consume(ctx, []string{topic}, h); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
				break
			}
		}
		consumed <- err
	}()
	select {
	case <-h.done:
	case err := <-consumed:
		cancel()
		t.Fatalf("sarama group consume stopped after %d of %d records: %v", len(h.records()), want, err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatalf("sarama group got %d of %d records in 60s", len(h.records()), want)
	}

	// While the session runs: the coordinator sarama found and every
	// broker it knows are kproxy's.
	coord, err := client.Coordinator(group)
	if err != nil {
		t.Fatalf("sarama coordinator: %v", err)
	}
	e.checkProxyAddr("sarama Coordinator()", coord.Addr(), false)
	if want, _ := e.proxy.BrokerAddr(e.cluster.CoordinatorFor(group)); coord.Addr() != want {
		t.Errorf("sarama coordinator %d at %s; kfake's coordinator for %s is at kproxy %s", coord.ID(), coord.Addr(), group, want)
	}
	e.checkSaramaBrokers(client, topic)

	cancel()
	if err := <-consumed; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
		t.Errorf("sarama group consume: %v", err)
	}
	if err := cg.Close(); err != nil {
		t.Errorf("close consumer group: %v", err)
	}
	return h
}

// checkSaramaBrokers checks every address the sarama client was told:
// brokers, and leaders of every partition of topic.
func (e *env) checkSaramaBrokers(client sarama.Client, topic string) {
	t := e.t
	t.Helper()
	brokers := client.Brokers()
	if len(brokers) != numBrokers {
		t.Errorf("sarama knows %d brokers, want %d", len(brokers), numBrokers)
	}
	for _, b := range brokers {
		e.checkProxyAddr(fmt.Sprintf("sarama Brokers() id %d", b.ID()), b.Addr(), false)
		if want, _ := e.proxy.BrokerAddr(b.ID()); b.Addr() != want {
			t.Errorf("sarama broker %d at %s, kproxy advertises %s", b.ID(), b.Addr(), want)
		}
	}
	for p := int32(0); p < numPartitions; p++ {
		leader, err := client.Leader(topic, p)
		if err != nil {
			t.Errorf("sarama leader of %s/%d: %v", topic, p, err)
			continue
		}
		e.checkProxyAddr(fmt.Sprintf("sarama Leader(%s, %d)", topic, p), leader.Addr(), false)
	}
	if ctrl, err := client.Controller(); err != nil {
		t.Errorf("sarama controller: %v", err)
	} else {
		e.checkProxyAddr("sarama Controller()", ctrl.Addr(), false)
	}
}

func saramaProduce(t *testing.T, p sarama.SyncProducer, topic string, rs []record) {
	t.Helper()
	const batch = 250
	for start := 0; start < len(rs); start += batch {
		msgs := make([]*sarama.ProducerMessage, 0, batch)
		for _, r := range rs[start:min(start+batch, len(rs))] {
			msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(r.key), Value: sarama.StringEncoder(r.value)})
		}
		if err := p.SendMessages(msgs); err != nil {
			t.Fatalf("sarama SendMessages: %v", err)
		}
		for _, m := range msgs {
			if m.Offset < 0 {
				t.Fatalf("sarama produced %v without an offset", m.Key)
			}
		}
	}
}

// TestSarama: an idempotent acks=all SyncProducer writes 2,000 keyed
// records through kproxy, a consumer group reads and commits them all in
// per-partition order, and a second session of the group after a restart
// gets only the records produced since. Run at the oldest version sarama
// allows an idempotent producer (all non-flexible requests), at sarama's
// default, and at a version with flexible requests throughout.
func TestSarama(t *testing.T) {
	for _, version := range []sarama.KafkaVersion{sarama.V0_11_0_0, sarama.DefaultVersion, sarama.V3_6_0_0} {
		t.Run(version.String(), func(t *testing.T) {
			t.Parallel()
			testSarama(t, version)
		})
	}
}

func testSarama(t *testing.T, version sarama.KafkaVersion) {
	e := newEnv(t)
	const (
		topic = "sarama-topic"
		group = "sarama-group"
	)
	e.createTopic(topic)

	client, err := sarama.NewClient([]string{e.bootstrap()}, saramaConfig(version))
	if err != nil {
		t.Fatalf("sarama client: %v", err)
	}
	defer client.Close()
	producer, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		t.Fatalf("sarama sync producer: %v", err)
	}
	defer producer.Close()

	first := makeRecords("sarama", 2000)
	saramaProduce(t, producer, topic, first)
	e.checkSaramaBrokers(client, topic)

	h := e.saramaConsumeGroup(version, group, topic, len(first))
	t.Logf("sarama group, first session: %d records", len(h.records()))
	checkSameRecords(t, "sarama group, first session", h.records(), first)
	h.checkOrder()
	e.checkCommitted(group, topic, int64(len(first)))
	if t.Failed() {
		t.FailNow()
	}

	second := makeRecords("sarama-after-restart", 200)
	saramaProduce(t, producer, topic, second)
	h = e.saramaConsumeGroup(version, group, topic, len(second))
	t.Logf("sarama group, second session: %d records", len(h.records()))
	checkSameRecords(t, "sarama group, second session", h.records(), second)
	h.checkOrder()
	e.checkCommitted(group, topic, int64(len(first)+len(second)))
}
