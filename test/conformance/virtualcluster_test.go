package conformance

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// The virtual-cluster scenario is every client's round trip through a
// prefixed virtual cluster (e.vc): the client uses plain names, the
// upstream holds them under vcPrefix, checked there through the
// passthrough kproxy (e.plain), which sees the upstream's names.
func init() {
	register("franz-go", "virtual-cluster", franzVirtualCluster)
	register("sarama", "virtual-cluster", saramaVirtualCluster)
	register("kafka-go", "virtual-cluster", kafkagoVirtualCluster)
	register("kcat", "virtual-cluster", kcatVirtualCluster)
	register("confluent-kafka", "virtual-cluster", confluentVirtualCluster)
	register("java", "virtual-cluster", javaVirtualCluster)
}

// vcPrefix is the virtual cluster's prefix of every kind, unique per run
// so that a reused real cluster never mixes runs.
var vcPrefix = "vc-" + runID + "."

// startVirtualCluster starts e.vc: a plaintext kproxy serving the virtual
// cluster "conformance", every name prefixed with vcPrefix.
func (e *env) startVirtualCluster(t *testing.T) {
	t.Helper()
	e.vc = kproxytest.Start(t, testkit.Config{Upstream: e.upstream, Extra: fmt.Sprintf(`virtual_clusters:
  - name: conformance
    listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0}
    topic_prefix: %[1]q
    group_prefix: %[1]q
    transactional_id_prefix: %[1]q
    cluster_id: conformance-vc
`, vcPrefix)}.YAML())
}

// vcTopic creates a topic of the virtual cluster (upstream name vcPrefix
// + its name) and returns the name its clients use.
func (e *env) vcTopic(t *testing.T, c *cellCtx, suffix string, n int32) string {
	t.Helper()
	upstream := e.newTopicNamed(t, vcPrefix+name(c, suffix), n)
	return strings.TrimPrefix(upstream, vcPrefix)
}

// checkVCCommitted checks group's commits on topic (the tenant's names)
// at the upstream, under their prefixed names.
func (e *env) checkVCCommitted(t *testing.T, group, topic string, want int64) {
	t.Helper()
	e.checkCommitted(t, vcPrefix+group, vcPrefix+topic, want)
}

func franzVirtualCluster(t *testing.T, c *cellCtx, e *env) {
	topic := e.vcTopic(t, c, "t", partitions)
	want := makeRecs("franz-vc", goRecords)
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.vc.BootstrapAddr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	franzProduce(t, cl, topic, want)
	for _, protocol := range []string{"classic", "consumer"} {
		group := name(c, "g-"+protocol)
		var opts []kgo.Opt
		if protocol == "consumer" {
			opts = append(opts, kgo.ServerSideBalancer())
		}
		checkRecords(t, "franz-go group through the virtual cluster ("+protocol+")",
			franzConsumeGroup(t, []string{e.vc.BootstrapAddr()}, group, topic, len(want), opts...), want)
		e.checkVCCommitted(t, group, topic, int64(len(want)))
	}
	// Read from the upstream itself: the records are under the prefix.
	checkRecords(t, "upstream read of "+vcPrefix+topic, franzReadAll(t, e, vcPrefix+topic, len(want)), want)
}

func saramaVirtualCluster(t *testing.T, c *cellCtx, e *env) {
	topic := e.vcTopic(t, c, "t", partitions)
	want := makeRecs("sarama-vc", goRecords)
	addr := e.vc.BootstrapAddr()
	saramaProduce(t, saramaProducer(t, saramaClient(t, addr, saramaConfig())), topic, want)
	group := name(c, "g")
	checkRecords(t, "sarama group through the virtual cluster", saramaConsumeGroup(t, addr, saramaConfig(), group, topic, len(want), nil), want)
	e.checkVCCommitted(t, group, topic, int64(len(want)))
}

func kafkagoVirtualCluster(t *testing.T, c *cellCtx, e *env) {
	topic := e.vcTopic(t, c, "t", partitions)
	want := makeRecs("kafkago-vc", goRecords)
	addr := e.vc.BootstrapAddr()
	kafkagoWrite(t, addr, kafkagoSecurity{}, topic, want)
	group := name(c, "g")
	checkRecords(t, "kafka-go group reader through the virtual cluster", kafkagoRead(t, addr, kafkagoSecurity{}, group, topic, len(want), kafka.ReadUncommitted), want)
	e.checkVCCommitted(t, group, topic, int64(len(want)))
}

func kcatVirtualCluster(t *testing.T, c *cellCtx, e *env) {
	requireKcat(t, c)
	topic := e.vcTopic(t, c, "t", partitions)
	want := makeRecs("kcat-vc", goRecords)
	addr := e.vc.BootstrapAddr()
	e.kcat(t, e.vc, kcatInput(want), append([]string{"-b", addr, "-t", topic}, kcatProduce...)...)
	group := name(c, "g")
	checkRecords(t, "kcat -G through the virtual cluster", parseKcat(t, e.kcat(t, e.vc, nil, "-b", addr, "-G", group,
		"-X", "auto.offset.reset=earliest", "-e", "-f", kcatFormat, topic)), want)
	e.checkVCCommitted(t, group, topic, int64(len(want)))
	// kcat -L lists the tenant's topic by its own name, nothing prefixed.
	list := string(e.kcat(t, e.vc, nil, "-b", addr, "-L"))
	if !strings.Contains(list, `topic "`+topic+`"`) || strings.Contains(list, vcPrefix) || strings.Contains(list, "__consumer_offsets") {
		t.Errorf("kcat -L through the virtual cluster:\n%s", list)
	}
}

func confluentVirtualCluster(t *testing.T, c *cellCtx, e *env) {
	requireConfluent(t, c)
	topic := e.vcTopic(t, c, "t", partitions)
	group := name(c, "g")
	var out confluentConsumed
	e.confluent(t, e.vc, &out, "roundtrip", "--topic", topic, "--group", group, "--group-protocol", "classic",
		"--records", strconv.Itoa(goRecords), "--prefix", "confluent-vc")
	if out.Acked != goRecords {
		t.Errorf("confluent-kafka: %d of %d records acked", out.Acked, goRecords)
	}
	checkRecords(t, "confluent-kafka group through the virtual cluster", out.got(), makeRecs("confluent-vc", goRecords))
	e.checkVCCommitted(t, group, topic, goRecords)
}

// javaVirtualCluster: Kafka's verifiable producer and consumer, then
// kafka-consumer-groups --describe and kafka-transactions, all through the
// virtual cluster: every name they print is the tenant's own.
func javaVirtualCluster(t *testing.T, c *cellCtx, e *env) {
	requireJava(t, c)
	topic := e.vcTopic(t, c, "t", partitions)
	addr := e.vc.BootstrapAddr()
	acked := e.javaProduce(t, e.vc, topic, 1, javaRecords)
	group := name(c, "g")
	gs := e.javaConsume(t, e.vc, topic, group, "classic", javaRecords)
	checkAcked(t, "kafka-verifiable-consumer through the virtual cluster", gs, acked)
	e.checkVCCommitted(t, group, topic, javaRecords)

	if e.real {
		e.javaConsumerGroups(t, group, topic)
	} else {
		c.note("kafka-consumer-groups is run against Kafka only: against kfake directly it lists no group (--list) and fails (--describe: DescribeTopicPartitions with null eligible leader replicas)")
	}

	// A transaction through the virtual cluster, then kafka-transactions.
	txnID := name(c, "txn")
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID(txnID), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, kgo.StringRecord("in a transaction")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	txns := e.java(t, e.vc, nil, "kafka-transactions", "--bootstrap-server", addr, "list").stdout.String()
	if !strings.Contains(txns, txnID) || strings.Contains(txns, vcPrefix) {
		t.Errorf("kafka-transactions list through the virtual cluster does not list %s alone:\n%s", txnID, txns)
	}
	td := e.java(t, e.vc, nil, "kafka-transactions", "--bootstrap-server", addr, "describe", "--transactional-id", txnID).stdout.String()
	if !strings.Contains(td, txnID) || strings.Contains(td, vcPrefix) || !(strings.Contains(td, "CompleteCommit") || !e.real && strings.Contains(td, "Empty")) {
		t.Errorf("kafka-transactions describe --transactional-id %s through the virtual cluster:\n%s", txnID, td)
	}
}

// javaConsumerGroups: kafka-consumer-groups --describe and --list through
// the virtual cluster name group and its topic as the tenant does.
func (e *env) javaConsumerGroups(t *testing.T, group, topic string) {
	t.Helper()
	addr := e.vc.BootstrapAddr()
	desc := e.java(t, e.vc, nil, "kafka-consumer-groups", "--bootstrap-server", addr, "--describe", "--group", group).stdout.String()
	if !strings.Contains(desc, group) || !strings.Contains(desc, topic) || strings.Contains(desc, vcPrefix) {
		t.Errorf("kafka-consumer-groups --describe --group %s through the virtual cluster:\n%s", group, desc)
	}
	list := e.java(t, e.vc, nil, "kafka-consumer-groups", "--bootstrap-server", addr, "--list").stdout.String()
	if !strings.Contains(list, group) || strings.Contains(list, vcPrefix) {
		t.Errorf("kafka-consumer-groups --list through the virtual cluster:\n%s", list)
	}
}
