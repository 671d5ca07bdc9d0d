package e2esni

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// createTopic creates topic through cl and waits until its metadata lists
// every partition.
func createTopic(ctx context.Context, t testing.TB, cl *kgo.Client, topic string, partitions int32) {
	t.Helper()
	adm := kadm.NewClient(cl)
	resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	if !waitFor(10*time.Second, func() bool {
		md, err := adm.Metadata(ctx, topic)
		td, ok := md.Topics[topic]
		return err == nil && ok && td.Err == nil && len(td.Partitions) == int(partitions)
	}) {
		t.Fatalf("topic %s not visible through kproxy", topic)
	}
}

// produceSync produces n records tagged with prefix, round-robin over
// partitions (cl must use kgo.ManualPartitioner), so every leader gets
// some, and fails t on error.
func produceSync(ctx context.Context, t testing.TB, cl *kgo.Client, topic, prefix string, n int, partitions int32) {
	t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Partition: int32(i) % partitions, Value: fmt.Appendf(nil, "%s-%d", prefix, i)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce %s: %v", prefix, err)
	}
}

// consumeAll polls cl until it has read want distinct values, failing t on
// a duplicate or on ctx's end.
func consumeAll(ctx context.Context, t testing.TB, cl *kgo.Client, want int) {
	t.Helper()
	seen := map[string]bool{}
	for len(seen) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records: %v", len(seen), want, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			if seen[string(r.Value)] {
				t.Errorf("record %s consumed twice", r.Value)
			}
			seen[string(r.Value)] = true
		})
	}
}

// TestSNIRoundTripFranz produces and consumes over the SNI listener's one
// TLS port to a 3-broker cluster, through a leader move and a broker added
// at runtime, and scans every address the clients were told: each must be
// a name of the pattern at kproxy's SNI port.
func TestSNIRoundTripFranz(t *testing.T) {
	t.Parallel()
	const (
		topic      = "sni-roundtrip"
		partitions = 6
	)
	ctx := testkit.Context(t, 60*time.Second)
	cluster := testkit.Cluster(t, 3)
	p := newPKI(t)
	px := kproxytest.Start(t, sniYAML(cluster, p, yamlOpts{listeners: "  port_per_broker: false"}))
	if px.BootstrapAddr() != "" {
		t.Fatalf("port_per_broker false, yet a bootstrap listener at %s", px.BootstrapAddr())
	}
	sniffer := testkit.NewSniffer()
	producer := sniClient(t, px, clientTLS(p), sniffer, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	createTopic(ctx, t, producer, topic, partitions)
	consumer := sniClient(t, px, clientTLS(p), sniffer,
		kgo.ConsumeTopics(topic), kgo.ConsumerGroup("sni-group"),
		kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchMaxWait(200*time.Millisecond),
		kgo.MetadataMinAge(100*time.Millisecond))

	produceSync(ctx, t, producer, topic, "before", 60, partitions)
	consumeAll(ctx, t, consumer, 60)

	// A leader move: clients follow leaders to other names on the same port.
	cluster.ShufflePartitionLeaders()
	produceSync(ctx, t, producer, topic, "moved", 60, partitions)
	consumeAll(ctx, t, consumer, 60)

	// A broker added at runtime: its name routes as soon as a response
	// names it.
	newNode, _, err := cluster.AddNode(-1, 0)
	if err != nil {
		t.Fatalf("add node: %v", err)
	}
	if err := cluster.MoveTopicPartition(topic, 0, newNode); err != nil {
		t.Fatalf("move partition 0 to node %d: %v", newNode, err)
	}
	produceSync(ctx, t, producer, topic, "added", 60, partitions)
	consumeAll(ctx, t, consumer, 60)
	if _, ok := px.SNIBrokerAddr(newNode); !ok {
		t.Errorf("node %d, added at runtime, is not routable on the SNI listener", newNode)
	}
	dialedNew := false
	for host := range sniffer.Dialed() {
		if want, _ := px.SNIBrokerAddr(newNode); host == want {
			dialedNew = true
		}
	}
	if !dialedNew {
		t.Errorf("no client dialed node %d's name: the runtime broker was not exercised (dialed %v)", newNode, sniffer.Dialed())
	}
	checkSNIAddrs(t, sniffer, sniPort(t, px))
}
