package e2epolicy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

const binaryGovernancePolicy = `
policy:
  rules:
    - {name: everything, principals: ["*"], allow: [all], topics: ["*"], groups: ["*"], cluster: true}
  broker_defaults: {num_partitions: 3, default_replication_factor: 1}
  governance:
    - name: names
      topic_changes: {name_pattern: "re:^[a-z]+\\.[a-z]+$", max_partitions: 8}
    - name: durable-payments
      topics: ["payments.*"]
      topic_changes: {required_configs: ["min.insync.replicas >= 2"]}
`

// TestBinaryGovernanceHoldsAgainstAutoCreation runs the real kproxy binary
// in front of kfake (auto-creation on, 3 partitions by default) with
// topic_changes governance, and checks kfake itself, not through kproxy:
// a franz-go producer that auto-creates a topic CreateTopics would refuse
// creates nothing; one governance accepts is created; a Produce to a
// missing topic creates nothing (Kafka and kfake auto-create only on
// Metadata); CreatePartitions past max_partitions is refused with
// POLICY_VIOLATION and leaves the partition count alone.
func TestBinaryGovernanceHoldsAgainstAutoCreation(t *testing.T) {
	bin := testkit.KproxyBinary(t)
	cluster := testkit.Cluster(t, 1, kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(3), kfake.SeedTopics(2, "grow.me"))
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "kproxy.yaml")
	cfg := "upstream: {bootstrap_servers: [\"" + strings.Join(cluster.ListenAddrs(), "\", \"") + "\"]}\n" +
		"listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0}\n" +
		"admin: {listen: \"127.0.0.1:0\"}\nlog: {level: info, format: json}\n" +
		"audit: {output: " + filepath.Join(dir, "audit.log") + "}\n" + binaryGovernancePolicy
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	kp := testkit.RunBinary(t, bin, cfgPath)
	kp.WaitReady()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// A new client each time: kgo answers Metadata from a short-lived cache.
	kfakeTopics := func() kadm.TopicDetails {
		t.Helper()
		directCl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
		if err != nil {
			t.Fatal(err)
		}
		defer directCl.Close()
		topics, err := kadm.NewClient(directCl).ListTopics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return topics
	}

	produce := func(topic string) error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(kp.Bootstrap), kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic(topic),
			kgo.UnknownTopicRetries(3), kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		return cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr()
	}
	// Refused by name_pattern, and by required_configs (auto-creation sets
	// no configs): the producer sees the topic as missing.
	for _, topic := range []string{"BadName", "payments.eu"} {
		if err := produce(topic); !errors.Is(err, kerr.UnknownTopicOrPartition) {
			t.Errorf("produce to %s with auto-creation: %v, want UNKNOWN_TOPIC_OR_PARTITION", topic, err)
		}
	}
	// Accepted by every rule: auto-created as without kproxy.
	if err := produce("orders.eu"); err != nil {
		t.Errorf("produce to orders.eu with auto-creation: %v", err)
	}

	// A raw Metadata request asking to auto-create, and a raw Produce to a
	// missing topic.
	raw := testkit.DialRaw(t, kp.Bootstrap, "raw")
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(12)
	md.AllowAutoTopicCreation = true
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("Another_Bad")}}
	mresp := raw.MustRoundTrip(t, md).(*kmsg.MetadataResponse)
	if len(mresp.Topics) != 1 || mresp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("Metadata auto-creating Another_Bad answered %+v, want UNKNOWN_TOPIC_OR_PARTITION", mresp.Topics)
	}
	presp := raw.MustRoundTrip(t, produceRequest(-1, "Produced_Bad")).(*kmsg.ProduceResponse)
	if got := produceCodes(presp); got != "Produced_Bad=3" {
		t.Errorf("Produce to a missing topic answered %s, want UNKNOWN_TOPIC_OR_PARTITION", got)
	}

	topics := kfakeTopics()
	for _, refused := range []string{"BadName", "payments.eu", "Another_Bad", "Produced_Bad"} {
		if topics.Has(refused) {
			t.Errorf("kfake has topic %s, which topic_changes refuses", refused)
		}
	}
	if !topics.Has("orders.eu") || len(topics["orders.eu"].Partitions) != 3 {
		t.Errorf("kfake lacks the auto-created orders.eu with 3 partitions: %+v", topics["orders.eu"])
	}

	// CreatePartitions: 9 is past max_partitions 8; 8 is not.
	adm := kadm.NewClient(clientOf(t, kp.Bootstrap))
	over, err := adm.UpdatePartitions(ctx, 9, "grow.me")
	if err != nil {
		t.Fatal(err)
	}
	if r := over["grow.me"]; !errors.Is(r.Err, kerr.PolicyViolation) || !strings.Contains(r.ErrMessage, `"names"`) {
		t.Errorf("CreatePartitions to 9: %v %q, want POLICY_VIOLATION naming the rule", r.Err, r.ErrMessage)
	}
	if n := len(kfakeTopics()["grow.me"].Partitions); n != 2 {
		t.Errorf("grow.me has %d partitions on kfake after a refused CreatePartitions, want 2", n)
	}
	within, err := adm.UpdatePartitions(ctx, 8, "grow.me")
	if err != nil || within["grow.me"].Err != nil {
		t.Fatalf("CreatePartitions to 8: %v %v", err, within["grow.me"].Err)
	}
	if n := len(kfakeTopics()["grow.me"].Partitions); n != 8 {
		t.Errorf("grow.me has %d partitions on kfake, want 8", n)
	}
}

func clientOf(t *testing.T, seed string) *kgo.Client {
	t.Helper()
	return testkit.Client(t, kgo.SeedBrokers(seed))
}
