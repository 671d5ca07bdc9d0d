package e2eclients

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// TestKafkaGo: a segmentio/kafka-go Writer produces 1,000 keyed records
// through kproxy with acks=all, and a group Reader consumes and commits
// them all.
func TestKafkaGo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const (
		topic = "kafkago-topic"
		group = "kafkago-group"
	)
	e.createTopic(topic)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// What kafka-go's own metadata calls see.
	conn, err := kafka.DialContext(ctx, "tcp", e.bootstrap())
	if err != nil {
		t.Fatalf("kafka-go dial: %v", err)
	}
	brokers, err := conn.Brokers()
	if err != nil {
		t.Fatalf("kafka-go Brokers: %v", err)
	}
	if len(brokers) != numBrokers {
		t.Errorf("kafka-go sees %d brokers, want %d", len(brokers), numBrokers)
	}
	for _, b := range brokers {
		e.checkProxyAddr("kafka-go Brokers()", net.JoinHostPort(b.Host, strconv.Itoa(b.Port)), false)
	}
	parts, err := conn.ReadPartitions(topic)
	if err != nil {
		t.Fatalf("kafka-go ReadPartitions: %v", err)
	}
	for _, p := range parts {
		e.checkProxyAddr("kafka-go partition leader", net.JoinHostPort(p.Leader.Host, strconv.Itoa(p.Leader.Port)), false)
	}
	conn.Close()

	want := makeRecords("kafkago", 1000)
	w := &kafka.Writer{
		Addr:         kafka.TCP(e.bootstrap()),
		Topic:        topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchSize:    200,
		BatchTimeout: 5 * time.Millisecond,
	}
	msgs := make([]kafka.Message, len(want))
	for i, r := range want {
		msgs[i] = kafka.Message{Key: []byte(r.key), Value: []byte(r.value)}
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("kafka-go WriteMessages: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("kafka-go writer close: %v", err)
	}

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:           []string{e.bootstrap()},
		GroupID:           group,
		Topic:             topic,
		StartOffset:       kafka.FirstOffset,
		MaxWait:           100 * time.Millisecond,
		CommitInterval:    100 * time.Millisecond,
		HeartbeatInterval: 500 * time.Millisecond,
	})
	var got []record
	lastOffset := map[int]int64{}
	for len(got) < len(want) {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			r.Close()
			t.Fatalf("kafka-go ReadMessage after %d of %d records: %v", len(got), len(want), err)
		}
		if l, ok := lastOffset[m.Partition]; ok && m.Offset <= l {
			t.Errorf("partition %d: offset %d after %d", m.Partition, m.Offset, l)
		}
		lastOffset[m.Partition] = m.Offset
		got = append(got, record{key: string(m.Key), value: string(m.Value)})
	}
	if err := r.Close(); err != nil { // flushes the pending commits
		t.Errorf("kafka-go reader close: %v", err)
	}
	t.Logf("kafka-go group reader: %d records from %d partitions", len(got), len(lastOffset))
	checkSameRecords(t, "kafka-go group reader", got, want)
	e.checkCommitted(group, topic, int64(len(want)))
}
