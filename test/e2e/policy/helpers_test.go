// Package e2epolicy drives kproxy's policy end to end: a real kfake
// cluster, a real kproxy with the policy enforcer plugged in, and franz-go
// clients (or raw protocol connections) whose only seed is kproxy. Checks
// of what reached the cluster go straight to kfake.
package e2epolicy

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/policy"
	"github.com/kproxy/kproxy/internal/protocol"
	"github.com/kproxy/kproxy/internal/proxy"
	"github.com/kproxy/kproxy/internal/testkit"
)

// env is one test's cluster, kproxy and policy.
type env struct {
	t       *testing.T
	cluster *kfake.Cluster
	proxy   *testkit.Proxy
	enf     *policy.Enforcer
	reg     *prometheus.Registry // policy metrics
	audit   *syncBuffer
}

// parseConfig parses YAML (a policy and audit section) the way kproxy
// loads its file.
func parseConfig(t testing.TB, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader("upstream: {bootstrap_servers: [\"127.0.0.1:1\"]}\n" + yaml))
	if err != nil {
		t.Fatalf("policy config: %v", err)
	}
	return cfg
}

// newEnv starts a kfake cluster of brokers nodes with the given topics
// (3 partitions each) and kproxy in front of it enforcing policyYAML.
func newEnv(t *testing.T, brokers int, topics []string, policyYAML string, opts ...kfake.Opt) *env {
	t.Helper()
	if len(topics) > 0 {
		opts = append(opts, kfake.SeedTopics(3, topics...))
	}
	c := testkit.Cluster(t, brokers, opts...)
	cfg := parseConfig(t, policyYAML)
	e := &env{t: t, cluster: c, reg: prometheus.NewRegistry(), audit: &syncBuffer{}}
	enf, err := policy.New(cfg.Policy, cfg.Audit, policy.WithAuditWriter(e.audit), policy.WithRegisterer(e.reg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { enf.Close() })
	e.enf = enf
	e.proxy = testkit.StartProxyWith(t, c.ListenAddrs(), "", proxy.WithFilters(enf))
	return e
}

// client returns a kgo client seeded only with kproxy, with client id id.
func (e *env) client(id string, opts ...kgo.Opt) *kgo.Client {
	e.t.Helper()
	base := []kgo.Opt{
		kgo.SeedBrokers(e.proxy.BootstrapAddr()),
		kgo.ClientID(id),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }),
		kgo.RequestRetries(3),
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(cl.Close)
	return cl
}

// direct returns an admin client that talks to kfake itself, bypassing
// kproxy and its policy: the ground truth of what reached the cluster.
func (e *env) direct() *kadm.Client {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.cluster.ListenAddrs()...))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// endOffset is the end offset of topic/partition, asked of kfake directly.
func (e *env) endOffset(ctx context.Context, topic string, partition int32) int64 {
	e.t.Helper()
	offs, err := e.direct().ListEndOffsets(ctx, topic)
	if err != nil {
		e.t.Fatal(err)
	}
	o, ok := offs.Lookup(topic, partition)
	if !ok || o.Err != nil {
		e.t.Fatalf("end offset of %s/%d: %+v", topic, partition, o)
	}
	return o.Offset
}

// counter reads a policy metric by name and result label.
func counter(t testing.TB, g prometheus.Gatherer, name, result string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if labelIs(m, "result", result) || result == "" {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func labelIs(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// syncBuffer collects audit lines from the audit writer goroutine.
type syncBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	delay time.Duration // per Write: a slow disk, so the audit queue backs up
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	time.Sleep(s.delay)
	return s.b.Write(p)
}

func (s *syncBuffer) setDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ---- raw protocol connection ----

// rawConn is one hand-driven Kafka connection: tests that must prove what
// happens on a single connection, or in a single request, use it.
type rawConn struct {
	net.Conn
	corr     int32
	clientID string
}

func dialRaw(t *testing.T, addr, clientID string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{Conn: c, clientID: clientID}
}

// roundTrip writes req and reads and decodes its response.
func (c *rawConn) roundTrip(t *testing.T, req kmsg.Request) kmsg.Response {
	t.Helper()
	c.corr++
	frame := protocol.AppendRequestFrame(nil, protocol.RequestHeader{CorrelationID: c.corr, ClientID: c.clientID}, req)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write(frame); err != nil {
		t.Fatalf("write %s: %v", protocol.APIName(req.Key()), err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatalf("read %s response: %v", protocol.APIName(req.Key()), err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatalf("read %s response: %v", protocol.APIName(req.Key()), err)
	}
	if corr, _ := protocol.ResponseCorrelationID(body); corr != c.corr {
		t.Fatalf("correlation id %d, want %d", corr, c.corr)
	}
	b, err := protocol.SkipResponseHeader(req.Key(), req.GetVersion(), body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := protocol.DecodeResponse(req.Key(), req.GetVersion(), b)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// recordBatch encodes an uncompressed, non-idempotent v2 batch of values.
func recordBatch(values ...string) []byte {
	now := time.Now().UnixMilli()
	var recs []byte
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Value: []byte(v)}
		enc := r.AppendTo(nil)[1:]
		recs = binary.AppendVarint(recs, int64(len(enc)))
		recs = append(recs, enc...)
	}
	b := kmsg.RecordBatch{
		Magic: 2, LastOffsetDelta: int32(len(values) - 1), FirstTimestamp: now, MaxTimestamp: now,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(len(values)), Records: recs,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32c))
	return out
}

// produceRequest builds a v9 Produce (topics by name) of one record to
// partition 0 of each topic, in the order given.
func produceRequest(acks int16, topics ...string) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(9)
	req.Acks = acks
	req.TimeoutMillis = 10000
	for _, topic := range topics {
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = recordBatch("value for " + topic)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// produceCodes renders a Produce response as "topic=code ..." in order.
func produceCodes(resp kmsg.Response) string {
	var parts []string
	for _, t := range resp.(*kmsg.ProduceResponse).Topics {
		for _, p := range t.Partitions {
			parts = append(parts, fmt.Sprintf("%s=%d", t.Topic, p.ErrorCode))
		}
	}
	return strings.Join(parts, " ")
}
