package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

// The encryption scenario's producers and consumers, one pair per client.

func init() {
	register("franz-go", scenarioEncryption, func(t *testing.T, c *cellCtx, e *env) {
		encScenario(t, c, e, encClient{produce: franzEncProduce, consume: franzEncConsume, idempotent: true,
			tombstone: franzEncTombstone, txn: franzEncTxn, txnNote: "franz-go's transactional producer"})
	})
	register("sarama", scenarioEncryption, func(t *testing.T, c *cellCtx, e *env) {
		encScenario(t, c, e, encClient{produce: saramaEncProduce, consume: saramaEncConsume, idempotent: true,
			tombstone: saramaEncTombstone, readNullable: saramaEncReadNullable, txn: saramaEncTxn, readCommitted: saramaEncReadCommitted,
			txnNote: "sarama's transactional producer"})
	})
	register("kafka-go", scenarioEncryption, func(t *testing.T, c *cellCtx, e *env) {
		encScenario(t, c, e, encClient{produce: kafkagoEncProduce, consume: kafkagoEncConsume, idempotent: false,
			tombstone: kafkagoEncTombstone, readNullable: kafkagoEncReadNullable,
			txnNote: "kafka-go's Writer has no transactional producer"})
	})
}

func franzEncProduce(t *testing.T, addr, topic, codec string, rs []encRec) {
	t.Helper()
	compression, ok := testkit.CodecNamed(codec)
	if !ok {
		t.Fatalf("no codec %q", codec)
	}
	cl := testkit.Client(t, kgo.SeedBrokers(addr), kgo.ProducerBatchCompression(compression), kgo.ProducerLinger(50*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var krs []*kgo.Record
	for _, r := range rs {
		kr := &kgo.Record{Topic: topic, Key: []byte(r.key), Value: []byte(r.value)}
		for _, h := range r.headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.key, Value: []byte(h.value)})
		}
		krs = append(krs, kr)
	}
	if err := cl.ProduceSync(ctx, krs...).FirstErr(); err != nil {
		t.Fatalf("franz-go produce with %s: %v", codec, err)
	}
}

func franzEncConsume(t *testing.T, addr, topic string, n int) []encRec {
	t.Helper()
	cl := testkit.Client(t, kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var got []encRec
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("franz-go consumed %d of %d records: %v", len(got), n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("franz-go fetch %s/%d: %v", topic, p, err) })
		for _, r := range fs.Records() {
			g := encRec{key: string(r.Key), value: string(r.Value)}
			for _, h := range r.Headers {
				g.headers = append(g.headers, encHeader{h.Key, string(h.Value)})
			}
			got = append(got, g)
		}
	}
	return got
}

func saramaEncProduce(t *testing.T, addr, topic, codec string, rs []encRec) {
	t.Helper()
	codecs := map[string]sarama.CompressionCodec{"none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP,
		"snappy": sarama.CompressionSnappy, "lz4": sarama.CompressionLZ4, "zstd": sarama.CompressionZSTD}
	cfg := saramaConfig()
	cfg.Producer.Compression = codecs[codec]
	p := saramaProducer(t, saramaClient(t, addr, cfg))
	var msgs []*sarama.ProducerMessage
	for _, r := range rs {
		m := &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(r.key), Value: sarama.StringEncoder(r.value)}
		for _, h := range r.headers {
			m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.key), Value: []byte(h.value)})
		}
		msgs = append(msgs, m)
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatalf("sarama produce with %s: %v", codec, err)
	}
}

func saramaEncConsume(t *testing.T, addr, topic string, n int) []encRec {
	t.Helper()
	var got []encRec
	for _, m := range saramaPartitionMessages(t, addr, topic, n) {
		g := encRec{key: string(m.Key), value: string(m.Value)}
		for _, h := range m.Headers {
			g.headers = append(g.headers, encHeader{string(h.Key), string(h.Value)})
		}
		got = append(got, g)
	}
	return got
}

// saramaPartitionMessages reads the first n messages of partition 0 of
// topic with a sarama partition consumer, failing on a fetch error.
func saramaPartitionMessages(t *testing.T, addr, topic string, n int) []*sarama.ConsumerMessage {
	t.Helper()
	cfg := saramaConfig()
	cfg.Consumer.Return.Errors = true
	cons, err := sarama.NewConsumerFromClient(saramaClient(t, addr, cfg))
	if err != nil {
		t.Fatalf("sarama consumer: %v", err)
	}
	defer cons.Close()
	pc, err := cons.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatalf("sarama consume %s: %v", topic, err)
	}
	defer pc.Close()
	timeout := time.After(60 * time.Second)
	var got []*sarama.ConsumerMessage
	for len(got) < n {
		select {
		case m := <-pc.Messages():
			got = append(got, m)
		case err := <-pc.Errors():
			t.Fatalf("sarama fetch: %v", err)
		case <-timeout:
			t.Fatalf("sarama consumed %d of %d records", len(got), n)
		}
	}
	return got
}

func kafkagoEncProduce(t *testing.T, addr, topic, codec string, rs []encRec) {
	t.Helper()
	codecs := map[string]kafka.Compression{"none": 0, "gzip": kafka.Gzip,
		"snappy": kafka.Snappy, "lz4": kafka.Lz4, "zstd": kafka.Zstd}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, RequiredAcks: kafka.RequireAll,
		BatchTimeout: 5 * time.Millisecond, Compression: codecs[codec]}
	var msgs []kafka.Message
	for _, r := range rs {
		m := kafka.Message{Key: []byte(r.key), Value: []byte(r.value)}
		for _, h := range r.headers {
			m.Headers = append(m.Headers, kafka.Header{Key: h.key, Value: []byte(h.value)})
		}
		msgs = append(msgs, m)
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("kafka-go produce with %s: %v", codec, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("kafka-go writer close: %v", err)
	}
}

func kafkagoEncConsume(t *testing.T, addr, topic string, n int) []encRec {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{addr}, Topic: topic, Partition: 0, MaxWait: 200 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var got []encRec
	for len(got) < n {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("kafka-go consumed %d of %d records: %v", len(got), n, err)
		}
		g := encRec{key: string(m.Key), value: string(m.Value)}
		for _, h := range m.Headers {
			g.headers = append(g.headers, encHeader{h.Key, string(h.Value)})
		}
		got = append(got, g)
	}
	return got
}

func franzEncTombstone(t *testing.T, addr, topic, key, value string) {
	t.Helper()
	cl := testkit.Client(t, kgo.SeedBrokers(addr))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rs := []*kgo.Record{
		{Topic: topic, Key: []byte(key), Value: []byte(value)},
		{Topic: topic, Key: []byte(key), Value: nil},
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("franz-go: produce a record and its tombstone: %v", err)
	}
}

func saramaEncTombstone(t *testing.T, addr, topic, key, value string) {
	t.Helper()
	p := saramaProducer(t, saramaClient(t, addr, saramaConfig()))
	msgs := []*sarama.ProducerMessage{
		{Topic: topic, Key: sarama.StringEncoder(key), Value: sarama.StringEncoder(value)},
		{Topic: topic, Key: sarama.StringEncoder(key), Value: nil}, // nil: a null value
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatalf("sarama: produce a record and its tombstone: %v", err)
	}
}

// saramaEncTxn writes the three transactions with sarama's transactional
// producer, gzip-compressed.
func saramaEncTxn(t *testing.T, c *cellCtx, addr, topic string) txnBatches {
	t.Helper()
	cfg := saramaConfig()
	cfg.Producer.Transaction.ID = name(c, "txn")
	cfg.Producer.Transaction.Timeout = 30 * time.Second
	cfg.Producer.Compression = sarama.CompressionGZIP
	return saramaTxnBatches(t, saramaProducer(t, saramaClient(t, addr, cfg)), topic, encTxnRecords)
}

// saramaEncReadCommitted reads n records with a read_committed sarama
// group.
func saramaEncReadCommitted(t *testing.T, addr, topic string, n int) []got {
	t.Helper()
	cfg := saramaConfig()
	cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	return saramaConsumeGroup(t, addr, cfg, topic+"-g", topic, n, nil)
}

func kafkagoEncTombstone(t *testing.T, addr, topic, key, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// A Transport of its own: the default one caches the metadata of the
	// cell's first topic, without this one, and fails the write with
	// UNKNOWN_TOPIC_OR_PARTITION instead of refreshing it.
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, RequiredAcks: kafka.RequireAll, BatchTimeout: 5 * time.Millisecond, Transport: tr}
	msgs := []kafka.Message{
		{Key: []byte(key), Value: []byte(value)},
		{Key: []byte(key), Value: nil}, // nil: a null value
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("kafka-go: produce a record and its tombstone: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("kafka-go writer close: %v", err)
	}
}

// saramaEncReadNullable reads the first n records of partition 0: sarama
// gives a null value as nil.
func saramaEncReadNullable(t *testing.T, addr, topic string, n int) []encNullable {
	t.Helper()
	var out []encNullable
	for _, m := range saramaPartitionMessages(t, addr, topic, n) {
		out = append(out, encNullable{key: string(m.Key), value: string(m.Value), null: m.Value == nil})
	}
	return out
}

// kafkagoEncReadNullable reads the first n records of partition 0:
// kafka-go gives a null value as nil.
func kafkagoEncReadNullable(t *testing.T, addr, topic string, n int) []encNullable {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{addr}, Topic: topic, Partition: 0, MaxWait: 200 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out []encNullable
	for len(out) < n {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("kafka-go consumed %d of %d records: %v", len(out), n, err)
		}
		out = append(out, encNullable{key: string(m.Key), value: string(m.Value), null: m.Value == nil})
	}
	return out
}
