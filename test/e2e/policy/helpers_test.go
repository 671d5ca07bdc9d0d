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
	"github.com/kproxy/kproxy/internal/engine"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
	"github.com/kproxy/kproxy/policy"
)

// env is one test's cluster, kproxy and policy.
type env struct {
	t       *testing.T
	cluster *kfake.Cluster
	proxy   interface{ BootstrapAddr() string }
	reg     prometheus.Gatherer // kproxy's metrics, the policy's among them
	// auditLines stops what writes the audit lines and returns them all.
	auditLines func() string
	// reload has kproxy reload its file with policyYAML instead of the
	// policy it started with, as an edit of the file does (newEnv's).
	reload func(policyYAML string)
	// enf and audit are newEnforcerEnv's: the enforcer, and the buffer its
	// audit lines go to.
	enf   *policy.Enforcer
	audit *logbuf.Buffer
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
// (3 partitions each) and kproxy in front of it enforcing policyYAML (a
// policy section, and an audit section without output: its lines go to
// a file of the test's).
func newEnv(t *testing.T, brokers int, topics []string, policyYAML string, opts ...kfake.Opt) *env {
	t.Helper()
	c := seededCluster(t, brokers, topics, opts...)
	audit := kproxytest.NewAuditFile(t)
	configWith := func(policyYAML string) string {
		section := fmt.Sprintf("audit: {output: %q}\n", audit)
		if strings.Contains(policyYAML, "audit: {") {
			section, policyYAML = "", strings.Replace(policyYAML, "audit: {", fmt.Sprintf("audit: {output: %q, ", audit), 1)
		}
		return testkit.Config{Upstream: c.ListenAddrs(), Extra: section + policyYAML}.YAML()
	}
	p := kproxytest.Start(t, configWith(policyYAML))
	return &env{t: t, cluster: c, proxy: p, reg: p.Registry,
		auditLines: func() string {
			p.Stop()
			return audit.String(t)
		},
		reload: func(policyYAML string) { p.Reload(configWith(policyYAML)) },
	}
}

// newEnforcerEnv is newEnv with the enforcer plugged into the engine by
// hand, for the tests of what only its Go API offers: reloading through
// it, and an audit writer as slow as a loaded disk.
func newEnforcerEnv(t *testing.T, brokers int, topics []string, policyYAML string) *env {
	t.Helper()
	c := seededCluster(t, brokers, topics)
	cfg := parseConfig(t, policyYAML)
	reg := prometheus.NewRegistry()
	e := &env{t: t, cluster: c, reg: reg, audit: &logbuf.Buffer{}}
	enf, err := policy.New(cfg.Policy, cfg.Audit, policy.WithAuditWriter(e.audit), policy.WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { enf.Close() })
	e.enf = enf
	e.auditLines = func() string {
		enf.Close() // flush the audit writer
		return e.audit.String()
	}
	e.proxy = testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: c.ListenAddrs()}.YAML(), Options: []engine.Option{engine.WithFilters(enf)}})
	return e
}

// seededCluster starts a kfake cluster of brokers nodes with the given
// topics, 3 partitions each.
func seededCluster(t *testing.T, brokers int, topics []string, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	if len(topics) > 0 {
		opts = append(opts, kfake.SeedTopics(3, topics...))
	}
	return testkit.Cluster(t, brokers, opts...)
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
	return testkit.Client(e.t, append(base, opts...)...)
}

// direct returns an admin client that talks to kfake itself, bypassing
// kproxy and its policy: the ground truth of what reached the cluster.
func (e *env) direct() *kadm.Client {
	e.t.Helper()
	cl := testkit.Client(e.t, kgo.SeedBrokers(e.cluster.ListenAddrs()...))
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
	req := testkit.ProduceByName(9, acks, nil, topics...)
	for i, rt := range req.Topics {
		req.Topics[i].Partitions[0].Records = testkit.RecordBatch("value for " + rt.Topic)
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
