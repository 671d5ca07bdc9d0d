package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kproxy/kproxy/internal/testkit/saramakit"
)

// saramaVersion is the protocol version sarama is configured for: the
// newest it knows.
var saramaVersion = sarama.MaxVersion

// saramaVersions are the Kafka versions the protocol-versions cell
// configures sarama for, each a whole round trip: the oldest at which
// sarama allows an idempotent producer (every request non-flexible),
// sarama's default, and one with flexible requests throughout. (The other
// cells run at saramaVersion.)
var saramaVersions = []sarama.KafkaVersion{sarama.V0_11_0_0, sarama.DefaultVersion, sarama.V3_6_0_0}

func init() {
	register("sarama", "produce-consume", saramaProduceConsume)
	register("sarama", "resume", saramaResume)
	register("sarama", "protocol-versions", saramaProtocolVersions)
	register("sarama", "admin", saramaAdmin)
	register("sarama", "transactions", saramaTransactions)
	register("sarama", "addresses", saramaAddresses)
	register("sarama", "tls-scram", saramaTLSSCRAM)
	register("sarama", "sni", saramaTLSSCRAM)
}

func saramaConfig() *sarama.Config { return saramaConfigAt(saramaVersion) }

// saramaConfigAt configures sarama for Kafka version v: idempotent,
// acks=all, a consumer group from the oldest offset with auto-commits.
func saramaConfigAt(v sarama.KafkaVersion) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "kproxy-conformance-sarama"
	cfg.Version = v
	cfg.Metadata.RefreshFrequency = 0
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Idempotent = true
	cfg.Producer.Return.Successes = true
	cfg.Producer.Retry.Max = 10
	cfg.Producer.Retry.Backoff = 100 * time.Millisecond
	cfg.Net.MaxOpenRequests = 1
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = true
	cfg.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
	cfg.Consumer.MaxWaitTime = 200 * time.Millisecond
	cfg.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
	cfg.Consumer.Group.Rebalance.Retry.Backoff = 200 * time.Millisecond
	return cfg
}

func saramaClient(t *testing.T, addr string, cfg *sarama.Config) sarama.Client {
	t.Helper()
	cl, err := sarama.NewClient([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("sarama client: %v", err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func saramaProduce(t *testing.T, p sarama.SyncProducer, topic string, rs []rec) {
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

func saramaProducer(t *testing.T, cl sarama.Client) sarama.SyncProducer {
	t.Helper()
	p, err := sarama.NewSyncProducerFromClient(cl)
	if err != nil {
		t.Fatalf("sarama producer: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// collector is a sarama ConsumerGroupHandler that keeps and marks every
// message and signals when it has want.
type collector struct {
	want int
	mu   sync.Mutex
	gs   []got
	done chan struct{}
	once sync.Once
}

func (*collector) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (*collector) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *collector) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		h.mu.Lock()
		h.gs = append(h.gs, got{m.Partition, m.Offset, string(m.Key), string(m.Value)})
		n := len(h.gs)
		h.mu.Unlock()
		sess.MarkMessage(m, "")
		if n >= h.want {
			h.once.Do(func() { close(h.done) })
		}
	}
	return nil
}

// saramaConsumeGroup runs one group session with its own client until it
// has want messages, then closes it (which commits the marks).
func saramaConsumeGroup(t *testing.T, addr string, cfg *sarama.Config, group, topic string, want int, check func(sarama.Client)) []got {
	t.Helper()
	cl, err := sarama.NewClient([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("sarama client: %v", err)
	}
	defer cl.Close()
	cg, err := sarama.NewConsumerGroupFromClient(group, cl)
	if err != nil {
		t.Fatalf("sarama consumer group: %v", err)
	}
	h := &collector{want: want, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	consumed := make(chan error, 1)
	go func() {
		var err error
		for ctx.Err() == nil {
			if err = cg.Consume(ctx, []string{topic}, h); err != nil {
				break
			}
		}
		consumed <- err
	}()
	select {
	case <-h.done:
	case err := <-consumed:
		cancel()
		t.Fatalf("sarama group stopped after %d of %d records: %v", len(h.gs), want, err)
	case <-time.After(90 * time.Second):
		cancel()
		t.Fatalf("sarama group got %d of %d records in 90s", len(h.gs), want)
	}
	if check != nil {
		check(cl)
	}
	cancel()
	if err := <-consumed; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
		t.Errorf("sarama group consume: %v", err)
	}
	if err := cg.Close(); err != nil {
		t.Errorf("close consumer group: %v", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gs
}

func saramaProduceConsume(t *testing.T, c *cellCtx, e *env) {
	topic := e.newTopic(t, c, "t", partitions)
	want := makeRecs("sarama", goRecords)
	saramaProduce(t, saramaProducer(t, saramaClient(t, e.bootstrap(), saramaConfig())), topic, want)
	group := name(c, "g")
	checkRecords(t, "sarama group", saramaConsumeGroup(t, e.bootstrap(), saramaConfig(), group, topic, len(want), nil), want)
	e.checkCommitted(t, group, topic, int64(len(want)))
	c.note("sarama configured for Kafka %s", saramaVersion)
}

func saramaResume(t *testing.T, c *cellCtx, e *env) {
	topic := e.newTopic(t, c, "t", partitions)
	group := name(c, "g")
	p := saramaProducer(t, saramaClient(t, e.bootstrap(), saramaConfig()))
	first := makeRecs("first", goRecords)
	saramaProduce(t, p, topic, first)
	checkRecords(t, "first session", saramaConsumeGroup(t, e.bootstrap(), saramaConfig(), group, topic, len(first), nil), first)
	e.checkCommitted(t, group, topic, int64(len(first)))
	second := makeRecs("second", 300)
	saramaProduce(t, p, topic, second)
	checkRecords(t, "second session (from the commits)", saramaConsumeGroup(t, e.bootstrap(), saramaConfig(), group, topic, len(second), nil), second)
	e.checkCommitted(t, group, topic, int64(len(first)+len(second)))
}

func saramaAdmin(t *testing.T, c *cellCtx, e *env) {
	adm, err := sarama.NewClusterAdmin([]string{e.bootstrap()}, saramaConfig())
	if err != nil {
		t.Fatalf("sarama admin: %v", err)
	}
	defer adm.Close()
	topic := name(c, "t")
	if err := adm.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 3, ReplicationFactor: -1}, false); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e.waitTopic(t, ctx, e.admin(t), topic, 3)
	md, err := adm.DescribeTopics([]string{topic})
	if err != nil || len(md) != 1 || md[0].Err != sarama.ErrNoError || len(md[0].Partitions) != 3 {
		t.Fatalf("describe topics: %v %+v", err, md)
	}
	v := "3600000"
	if err := adm.IncrementalAlterConfig(sarama.TopicResource, topic, map[string]sarama.IncrementalAlterConfigsEntry{
		"retention.ms": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &v}}, false); err != nil {
		t.Fatalf("incremental alter config: %v", err)
	}
	for deadline := time.Now().Add(15 * time.Second); ; { // see franzAdmin
		entries, err := adm.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: topic, ConfigNames: []string{"retention.ms"}})
		if err == nil && len(entries) == 1 && entries[0].Value == v {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("describe config after the alter: %v %+v", err, entries)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := adm.CreatePartitions(topic, 4, nil, false); err != nil {
		t.Fatalf("create partitions: %v", err)
	}
	e.waitTopic(t, ctx, e.admin(t), topic, 4)

	brokers, ctrl, err := adm.DescribeCluster()
	if err != nil {
		t.Fatalf("describe cluster: %v", err)
	}
	for _, b := range brokers {
		e.checkNodeAddr(t, e.plain, "sarama DescribeCluster", b.ID(), b.Addr())
	}
	if ctrl < 0 {
		t.Errorf("describe cluster: controller %d", ctrl)
	}

	group := name(c, "g")
	saramaProduce(t, saramaProducer(t, saramaClient(t, e.bootstrap(), saramaConfig())), topic, makeRecs("admin", 100))
	saramaConsumeGroup(t, e.bootstrap(), saramaConfig(), group, topic, 100, nil)
	groups, err := adm.ListConsumerGroups()
	if err != nil {
		t.Fatalf("list groups: %v", err)
	}
	if _, ok := groups[group]; !ok {
		t.Errorf("ListConsumerGroups does not list %s", group)
	}
	gd, err := adm.DescribeConsumerGroups([]string{group})
	if err != nil || len(gd) != 1 || gd[0].Err != sarama.ErrNoError {
		t.Fatalf("describe groups: %v %+v", err, gd)
	}
	if gd[0].State != "Empty" {
		t.Errorf("group state %s, want Empty", gd[0].State)
	}
	coord, err := adm.Coordinator(group)
	if err != nil {
		t.Fatalf("coordinator: %v", err)
	}
	e.checkAddr(t, e.plain, "sarama admin Coordinator", coord.Addr(), false)
	if err := adm.DeleteConsumerGroup(group); err != nil {
		t.Fatalf("delete group: %v", err)
	}
	if err := adm.DeleteTopic(topic); err != nil {
		t.Fatalf("delete topic: %v", err)
	}
	for {
		ts, err := adm.ListTopics()
		if _, ok := ts[topic]; err == nil && !ok {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("topic still listed after delete")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// saramaTransactions: a sarama transactional producer commits, aborts and
// commits; a read_committed sarama group sees only the committed records.
func saramaTransactions(t *testing.T, c *cellCtx, e *env) {
	topic := e.newTopic(t, c, "t", 3)
	cfg := saramaConfig()
	cfg.Producer.Transaction.ID = name(c, "txn")
	cfg.Producer.Transaction.Timeout = 30 * time.Second
	b := saramaTxnBatches(t, saramaProducer(t, saramaClient(t, e.bootstrap(), cfg)), topic, 300)
	ccfg := saramaConfig()
	ccfg.Consumer.IsolationLevel = sarama.ReadCommitted
	checkReadCommitted(t, "sarama read_committed group", saramaConsumeGroup(t, e.bootstrap(), ccfg, name(c, "g"), topic, len(b.committed), nil), b)
	e.checkTxnWritten(t, topic, b)
}

// saramaTxnBatches produces three transactions of m records each with
// the transactional producer p: commit, abort, commit.
func saramaTxnBatches(t *testing.T, p sarama.SyncProducer, topic string, m int) txnBatches {
	t.Helper()
	var b txnBatches
	for i, commit := range []bool{true, false, true} {
		prefix := "commit"
		if !commit {
			prefix = "abort"
		}
		rs := makeRecsFrom(prefix, i*m, m)
		if err := p.BeginTxn(); err != nil {
			t.Fatalf("begin txn: %v", err)
		}
		saramaProduce(t, p, topic, rs)
		var err error
		if commit {
			err = p.CommitTxn()
			b.committed = append(b.committed, rs...)
		} else {
			err = p.AbortTxn()
			b.aborted = append(b.aborted, rs...)
		}
		if err != nil {
			t.Fatalf("end txn (commit %v): %v", commit, err)
		}
	}
	return b
}

// saramaProtocolVersions: the produce-consume and resume round trips (and
// the addresses checks) with sarama configured for each of saramaVersions.
// (Kafka 4 removed the oldest protocol versions, KIP-896, but none that
// sarama sends when configured for 0.11.0.0.)
func saramaProtocolVersions(t *testing.T, c *cellCtx, e *env) {
	var ran []string
	for _, v := range saramaVersions {
		t.Run(v.String(), func(t *testing.T) {
			saramaVersionRoundTrip(t, c, e, v)
			ran = append(ran, v.String())
		})
	}
	c.note("sarama configured for Kafka %s", strings.Join(ran, ", "))
}

// saramaVersionRoundTrip: an idempotent producer writes N records, a group
// reads and commits them all in order (every address sarama holds
// meanwhile, the coordinator's included, is kproxy's), and a second
// session of the group gets only the records produced since.
func saramaVersionRoundTrip(t *testing.T, c *cellCtx, e *env, v sarama.KafkaVersion) {
	topic := e.newTopic(t, c, "t-"+v.String(), partitions)
	group := name(c, "g-"+v.String())
	cl := saramaClient(t, e.bootstrap(), saramaConfigAt(v))
	p := saramaProducer(t, cl)
	session := func(want int) []got {
		return saramaConsumeGroup(t, e.bootstrap(), saramaConfigAt(v), group, topic, want, func(gcl sarama.Client) {
			e.checkSaramaAddrs(t, gcl, topic)
			e.checkSaramaCoordinator(t, gcl, group)
		})
	}
	first := makeRecs("first", goRecords)
	saramaProduce(t, p, topic, first)
	e.checkSaramaAddrs(t, cl, topic)
	checkRecords(t, "first session", session(len(first)), first)
	e.checkCommitted(t, group, topic, int64(len(first)))
	if t.Failed() {
		t.FailNow()
	}
	second := makeRecs("second", 200)
	saramaProduce(t, p, topic, second)
	checkRecords(t, "second session (from the commits)", session(len(second)), second)
	e.checkCommitted(t, group, topic, int64(len(first)+len(second)))
}

// saramaAddresses: the brokers, leaders, controller and coordinator sarama
// knows are all kproxy's.
func saramaAddresses(t *testing.T, c *cellCtx, e *env) {
	topic := e.newTopic(t, c, "t", partitions)
	cl := saramaClient(t, e.bootstrap(), saramaConfig())
	saramaProduce(t, saramaProducer(t, cl), topic, makeRecs("addr", 200))
	e.checkSaramaAddrs(t, cl, topic)
	group := name(c, "g")
	saramaConsumeGroup(t, e.bootstrap(), saramaConfig(), group, topic, 200, func(gcl sarama.Client) {
		e.checkSaramaAddrs(t, gcl, topic)
		e.checkSaramaCoordinator(t, gcl, group)
	})
}

// checkSaramaAddrs fails unless every broker, every leader of topic's
// partitions and the controller that sarama client cl knows are what the
// plaintext kproxy advertises for that node, and cl knows every node.
func (e *env) checkSaramaAddrs(t *testing.T, cl sarama.Client, topic string) {
	t.Helper()
	for _, b := range cl.Brokers() {
		e.checkNodeAddr(t, e.plain, "sarama Brokers()", b.ID(), b.Addr())
	}
	if len(cl.Brokers()) != len(e.nodes) {
		t.Errorf("sarama knows %d brokers, want %d", len(cl.Brokers()), len(e.nodes))
	}
	for p := int32(0); p < partitions; p++ {
		l, err := cl.Leader(topic, p)
		if err != nil {
			t.Errorf("sarama Leader(%s, %d): %v", topic, p, err)
			continue
		}
		e.checkNodeAddr(t, e.plain, fmt.Sprintf("sarama Leader(%d)", p), l.ID(), l.Addr())
	}
	if ctrl, err := cl.Controller(); err != nil {
		t.Errorf("sarama Controller(): %v", err)
	} else {
		e.checkNodeAddr(t, e.plain, "sarama Controller()", ctrl.ID(), ctrl.Addr())
	}
}

// checkSaramaCoordinator fails unless the coordinator sarama client cl
// found for group is the upstream's coordinator for it, at the plaintext
// kproxy's address for that node.
func (e *env) checkSaramaCoordinator(t *testing.T, cl sarama.Client, group string) {
	t.Helper()
	coord, err := cl.Coordinator(group)
	if err != nil {
		t.Fatalf("sarama Coordinator: %v", err)
	}
	e.checkNodeAddr(t, e.plain, "sarama Coordinator()", coord.ID(), coord.Addr())
	if want := e.groupCoordinator(t, group); coord.ID() != want {
		t.Errorf("sarama Coordinator() is node %d; the upstream's coordinator for %s is node %d", coord.ID(), group, want)
	}
}

// saramaSASLConfig is saramaConfig over TLS (trusting e's CA) with SASL
// mechanism m (SaslHandshake v1, then SaslAuthenticate); the caller sets
// the credentials.
func saramaSASLConfig(t *testing.T, e *env, m sarama.SASLMechanism) *sarama.Config {
	cfg := saramaConfig()
	cfg.Net.TLS.Enable = true
	cfg.Net.TLS.Config = clientTLS(t, e)
	cfg.Net.SASL.Enable = true
	cfg.Net.SASL.Handshake = true
	cfg.Net.SASL.Version = sarama.SASLHandshakeV1
	cfg.Net.SASL.Mechanism = m
	return cfg
}

// saramaTLSSCRAM: sarama over TLS with SCRAM-SHA-512 (SaslHandshake v1 and
// SaslAuthenticate) produces and consumes with a group.
func saramaTLSSCRAM(t *testing.T, c *cellCtx, e *env) {
	topic := e.newTopic(t, c, "t", partitions)
	secure := func() *sarama.Config {
		cfg := saramaSASLConfig(t, e, sarama.SASLTypeSCRAMSHA512)
		cfg.Net.SASL.User, cfg.Net.SASL.Password = saslUser, saslPass
		cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &saramakit.SCRAMClient{SHA512: true} }
		return cfg
	}
	want := makeRecs("tls", goRecords)
	saramaProduce(t, saramaProducer(t, saramaClient(t, e.seed(e.tlsProxy(c)), secure())), topic, want)
	group := name(c, "g")
	gs := saramaConsumeGroup(t, e.seed(e.tlsProxy(c)), secure(), group, topic, len(want), func(cl sarama.Client) {
		for _, b := range cl.Brokers() {
			e.checkNodeAddr(t, e.tlsProxy(c), "sarama Brokers() over TLS", b.ID(), b.Addr())
		}
	})
	checkRecords(t, "sarama over TLS + SCRAM-SHA-512", gs, want)
	e.checkCommitted(t, group, topic, int64(len(want)))
}
