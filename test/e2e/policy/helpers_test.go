// Package e2epolicy drives kproxy's policy end to end: a real kfake
// cluster, a real kproxy with the policy enforcer plugged in, and franz-go
// clients (or raw protocol connections) whose only seed is kproxy. Checks
// of what reached the cluster go straight to kfake.
package e2epolicy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
	"github.com/kproxy/kproxy/policy"
)

// env is one test's cluster, kproxy and policy.
type env struct {
	t       *testing.T
	cluster *kfake.Cluster
	proxy   *kproxytest.Kproxy
	enf     *policy.Enforcer
	reg     *prometheus.Registry // policy metrics
	audit   *logbuf.Buffer
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
	e := &env{t: t, cluster: c, reg: prometheus.NewRegistry(), audit: &logbuf.Buffer{}}
	enf, err := policy.New(cfg.Policy, cfg.Audit, policy.WithAuditWriter(e.audit), policy.WithRegisterer(e.reg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { enf.Close() })
	e.enf = enf
	e.proxy = kproxytest.Start(t, testkit.Config{Upstream: c.ListenAddrs()}.YAML(), kproxytest.WithFilters(enf))
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
		rp.Records = testkit.RecordBatch("value for " + topic)
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
