package conformance

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	kgosasl "github.com/segmentio/kafka-go/sasl"
	"github.com/twmb/franz-go/pkg/sasl"
)

func init() {
	register("kafka-go", "produce-consume", kafkagoProduceConsume)
	register("kafka-go", "resume", kafkagoResume)
	register("kafka-go", "admin", kafkagoAdmin)
	register("kafka-go", "addresses", kafkagoAddresses)
	register("kafka-go", "tls-scram", kafkagoTLSSCRAM)
	register("kafka-go", "sni", kafkagoTLSSCRAM)
}

// kafkagoSecurity is TLS and a SASL mechanism, or nothing.
type kafkagoSecurity struct {
	tls  *tls.Config
	sasl kgosasl.Mechanism
}

// kafkagoWrite writes rs with acks=all (kafka-go has no idempotent
// producer) and a key hash balancer.
func kafkagoWrite(t *testing.T, addr string, sec kafkagoSecurity, topic string, rs []rec) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w := &kafka.Writer{
		Addr:         kafka.TCP(addr),
		Topic:        topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchSize:    200,
		BatchTimeout: 5 * time.Millisecond,
		Transport:    &kafka.Transport{TLS: sec.tls, SASL: sec.sasl},
	}
	msgs := make([]kafka.Message, len(rs))
	for i, r := range rs {
		msgs[i] = kafka.Message{Key: []byte(r.key), Value: []byte(r.value)}
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("kafka-go WriteMessages: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("kafka-go writer close: %v", err)
	}
}

// kafkagoRead reads n records with a group Reader, then closes it, which
// flushes the group's commits.
func kafkagoRead(t *testing.T, addr string, sec kafkagoSecurity, group, topic string, n int, iso kafka.IsolationLevel) []got {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cfg := kafka.ReaderConfig{
		Brokers:           []string{addr},
		GroupID:           group,
		Topic:             topic,
		StartOffset:       kafka.FirstOffset,
		MaxWait:           200 * time.Millisecond,
		CommitInterval:    100 * time.Millisecond,
		HeartbeatInterval: 500 * time.Millisecond,
		IsolationLevel:    iso,
		Dialer:            &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, TLS: sec.tls, SASLMechanism: sec.sasl},
	}
	var gs []got
	r := kafka.NewReader(cfg)
	for len(gs) < n {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			r.Close()
			t.Fatalf("kafka-go ReadMessage after %d of %d records: %v", len(gs), n, err)
		}
		gs = append(gs, got{int32(m.Partition), m.Offset, string(m.Key), string(m.Value)})
	}
	if err := r.Close(); err != nil {
		t.Errorf("kafka-go reader close: %v", err)
	}
	return gs
}

func kafkagoClient(addr string, sec kafkagoSecurity) *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(addr), Timeout: 20 * time.Second, Transport: &kafka.Transport{TLS: sec.tls, SASL: sec.sasl}}
}

func kafkagoMetadata(t *testing.T, addr string, sec kafkagoSecurity, topics ...string) *kafka.MetadataResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	md, err := kafkagoClient(addr, sec).Metadata(ctx, &kafka.MetadataRequest{Topics: topics})
	if err != nil {
		t.Fatalf("kafka-go Metadata: %v", err)
	}
	return md
}

func kafkagoProduceConsume(t *testing.T, c *cellCtx, e *env) {
	topic := e.newTopic(t, c, "t", partitions)
	want := makeRecs("kafkago", goRecords)
	kafkagoWrite(t, e.bootstrap(), kafkagoSecurity{}, topic, want)
	group := name(c, "g")
	checkRecords(t, "kafka-go group reader", kafkagoRead(t, e.bootstrap(), kafkagoSecurity{}, group, topic, len(want), kafka.ReadUncommitted), want)
	e.checkCommitted(t, group, topic, int64(len(want)))
	c.note("acks=all; kafka-go has no idempotent producer")
}

func kafkagoResume(t *testing.T, c *cellCtx, e *env) {
	topic := e.newTopic(t, c, "t", partitions)
	group := name(c, "g")
	first := makeRecs("first", goRecords)
	kafkagoWrite(t, e.bootstrap(), kafkagoSecurity{}, topic, first)
	checkRecords(t, "first session", kafkagoRead(t, e.bootstrap(), kafkagoSecurity{}, group, topic, len(first), kafka.ReadUncommitted), first)
	e.checkCommitted(t, group, topic, int64(len(first)))
	second := makeRecs("second", 300)
	kafkagoWrite(t, e.bootstrap(), kafkagoSecurity{}, topic, second)
	checkRecords(t, "second session (from the commits)", kafkagoRead(t, e.bootstrap(), kafkagoSecurity{}, group, topic, len(second), kafka.ReadUncommitted), second)
	e.checkCommitted(t, group, topic, int64(len(first)+len(second)))
}

func kafkagoAdmin(t *testing.T, c *cellCtx, e *env) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl := kafkagoClient(e.bootstrap(), kafkagoSecurity{})
	topic := name(c, "t")
	ct, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 3, ReplicationFactor: -1}}})
	if err != nil || ct.Errors[topic] != nil {
		t.Fatalf("create topic: %v %v", err, ct)
	}
	e.waitTopic(t, ctx, e.admin(t), topic, 3)
	md := kafkagoMetadata(t, e.bootstrap(), kafkagoSecurity{}, topic)
	if len(md.Topics) != 1 || len(md.Topics[0].Partitions) != 3 {
		t.Errorf("metadata of %s: %+v", topic, md.Topics)
	}
	ia, err := cl.IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{Resources: []kafka.IncrementalAlterConfigsRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic,
		Configs: []kafka.IncrementalAlterConfigsRequestConfig{{Name: "retention.ms", Value: "3600000", ConfigOperation: kafka.ConfigOperationSet}},
	}}})
	if err != nil || len(ia.Resources) != 1 || ia.Resources[0].Error != nil {
		t.Fatalf("incremental alter configs: %v %+v", err, ia)
	}
	// Brokers apply config changes from the metadata log: another broker
	// may answer with the old value for a moment.
	for deadline := time.Now().Add(15 * time.Second); ; {
		dc, err := cl.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
			ResourceType: kafka.ResourceTypeTopic, ResourceName: topic, ConfigNames: []string{"retention.ms"}}}})
		if err == nil && len(dc.Resources) == 1 && dc.Resources[0].Error == nil && len(dc.Resources[0].ConfigEntries) == 1 && dc.Resources[0].ConfigEntries[0].ConfigValue == "3600000" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("describe configs after the alter: %v %+v", err, dc)
		}
		time.Sleep(200 * time.Millisecond)
	}
	cp, err := cl.CreatePartitions(ctx, &kafka.CreatePartitionsRequest{Topics: []kafka.TopicPartitionsConfig{{Name: topic, Count: 4}}})
	if err != nil || cp.Errors[topic] != nil {
		t.Fatalf("create partitions: %v %v", err, cp)
	}
	e.waitTopic(t, ctx, e.admin(t), topic, 4)

	group := name(c, "g")
	kafkagoWrite(t, e.bootstrap(), kafkagoSecurity{}, topic, makeRecs("admin", 100))
	kafkagoRead(t, e.bootstrap(), kafkagoSecurity{}, group, topic, 100, kafka.ReadUncommitted)
	dg, err := cl.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
	if err != nil || len(dg.Groups) != 1 || dg.Groups[0].Error != nil {
		t.Fatalf("describe groups: %v %+v", err, dg)
	}
	dl, err := cl.DeleteGroups(ctx, &kafka.DeleteGroupsRequest{GroupIDs: []string{group}})
	if err != nil || dl.Errors[group] != nil {
		t.Fatalf("delete groups: %v %v", err, dl)
	}
	dt, err := cl.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	if err != nil || dt.Errors[topic] != nil {
		t.Fatalf("delete topics: %v %v", err, dt)
	}
}

// kafkagoAddresses: brokers, controller and leaders in kafka-go's Conn and
// Client metadata, and the group coordinator, are kproxy's.
func kafkagoAddresses(t *testing.T, c *cellCtx, e *env) {
	topic := e.newTopic(t, c, "t", partitions)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := kafka.DialContext(ctx, "tcp", e.bootstrap())
	if err != nil {
		t.Fatalf("kafka-go dial: %v", err)
	}
	defer conn.Close()
	brokers, err := conn.Brokers()
	if err != nil {
		t.Fatalf("kafka-go Brokers: %v", err)
	}
	for _, b := range brokers {
		e.checkNodeAddr(t, e.plain, "kafka-go Conn.Brokers", int32(b.ID), hostPort(b.Host, b.Port))
	}
	if len(brokers) != len(e.nodes) {
		t.Errorf("kafka-go Conn.Brokers lists %d brokers, want %d", len(brokers), len(e.nodes))
	}
	// A broker learns a new topic's leaders from the controller a moment
	// after the one that created it: read until this one knows them all.
	var parts []kafka.Partition
	kafkagoRetry(t, ctx, "ReadPartitions", func() error {
		parts, err = conn.ReadPartitions(topic)
		if err == nil && !kafkagoLeadersKnown(parts, partitions) {
			err = kafka.LeaderNotAvailable
		}
		return err
	})
	for _, p := range parts {
		e.checkNodeAddr(t, e.plain, fmt.Sprintf("kafka-go partition %d leader", p.ID), int32(p.Leader.ID), hostPort(p.Leader.Host, p.Leader.Port))
	}
	ctrl, err := conn.Controller()
	if err != nil {
		t.Fatalf("kafka-go Controller: %v", err)
	}
	e.checkNodeAddr(t, e.plain, "kafka-go Conn.Controller", int32(ctrl.ID), hostPort(ctrl.Host, ctrl.Port))
	md := kafkagoMetadata(t, e.bootstrap(), kafkagoSecurity{}, topic)
	for _, b := range md.Brokers {
		e.checkNodeAddr(t, e.plain, "kafka-go Client.Metadata", int32(b.ID), hostPort(b.Host, b.Port))
	}
	if len(md.Brokers) != len(e.nodes) {
		t.Errorf("kafka-go metadata lists %d brokers, want %d", len(md.Brokers), len(e.nodes))
	}
	group := name(c, "g")
	// The first FindCoordinator of a cluster answers COORDINATOR_NOT_AVAILABLE
	// until __consumer_offsets has leaders; Kafka's clients retry it, so do we.
	var fc *kafka.FindCoordinatorResponse
	kafkagoRetry(t, ctx, "FindCoordinator", func() error {
		fc, err = kafkagoClient(e.bootstrap(), kafkagoSecurity{}).FindCoordinator(ctx, &kafka.FindCoordinatorRequest{Key: group, KeyType: kafka.CoordinatorKeyTypeConsumer})
		if err == nil && fc.Error != nil {
			err = fc.Error
		}
		if err == nil && fc.Coordinator == nil {
			err = fmt.Errorf("no coordinator in %+v", fc)
		}
		return err
	})
	e.checkNodeAddr(t, e.plain, "kafka-go FindCoordinator", int32(fc.Coordinator.NodeID), hostPort(fc.Coordinator.Host, fc.Coordinator.Port))
	// And a group round trip, whose connections go where it was told.
	want := makeRecs("addr", 200)
	kafkagoWrite(t, e.bootstrap(), kafkagoSecurity{}, topic, want)
	checkRecords(t, "kafka-go group reader", kafkagoRead(t, e.bootstrap(), kafkagoSecurity{}, group, topic, len(want), kafka.ReadUncommitted), want)
}

// kafkagoRetry calls fn until it succeeds, fails with an error Kafka calls
// non-retriable, or ctx ends; the test fails in the last two cases.
func kafkagoRetry(t *testing.T, ctx context.Context, what string, fn func() error) {
	t.Helper()
	for {
		err := fn()
		if err == nil {
			return
		}
		var kerr kafka.Error
		if !errors.As(err, &kerr) || !kerr.Temporary() || ctx.Err() != nil {
			t.Fatalf("kafka-go %s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kafkagoLeadersKnown reports whether all n partitions have a leader.
func kafkagoLeadersKnown(parts []kafka.Partition, n int32) bool {
	if len(parts) != int(n) {
		return false
	}
	for _, p := range parts {
		if p.Leader.Host == "" || p.Error != nil {
			return false
		}
	}
	return true
}

func hostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

// kafkagoTLSSCRAM: kafka-go over TLS with SCRAM-SHA-512 writes and reads
// with a group.
func kafkagoTLSSCRAM(t *testing.T, c *cellCtx, e *env) {
	topic := e.newTopic(t, c, "t", partitions)
	sec := kafkagoSecurity{tls: clientTLS(t, e), sasl: kafkagoSASL{scramMechanism(true)}}
	want := makeRecs("tls", goRecords)
	kafkagoWrite(t, e.seed(e.tlsProxy(c)), sec, topic, want)
	group := name(c, "g")
	checkRecords(t, "kafka-go over TLS + SCRAM-SHA-512", kafkagoRead(t, e.seed(e.tlsProxy(c)), sec, group, topic, len(want), kafka.ReadUncommitted), want)
	e.checkCommitted(t, group, topic, int64(len(want)))
	for _, b := range kafkagoMetadata(t, e.seed(e.tlsProxy(c)), sec, topic).Brokers {
		e.checkNodeAddr(t, e.tlsProxy(c), "kafka-go metadata over TLS", int32(b.ID), hostPort(b.Host, b.Port))
	}
}

// kafkagoSASL adapts a franz-go SASL client (SCRAM-SHA-512, OAUTHBEARER)
// to kafka-go's sasl.Mechanism (kafka-go's SCRAM needs a module this
// repository does not depend on; it has no OAUTHBEARER).
type kafkagoSASL struct{ m sasl.Mechanism }

func (k kafkagoSASL) Name() string { return k.m.Name() }

func (k kafkagoSASL) Start(ctx context.Context) (kgosasl.StateMachine, []byte, error) {
	sess, first, err := k.m.Authenticate(ctx, "")
	return kafkagoSASLSession{sess}, first, err
}

type kafkagoSASLSession struct{ s sasl.Session }

func (k kafkagoSASLSession) Next(_ context.Context, challenge []byte) (bool, []byte, error) {
	return k.s.Challenge(challenge)
}
