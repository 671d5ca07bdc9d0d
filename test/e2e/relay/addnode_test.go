package e2e

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestBrokerAddedAtRuntime adds a node to the cluster while a producer is
// connected through kproxy, moves a partition to it, and checks that kproxy
// serves the new node on a listener of its own, that clients are told that
// listener, and that records produced to and consumed from the moved
// partition really go through it.
func TestBrokerAddedAtRuntime(t *testing.T) {
	t.Parallel()
	const (
		topic = "growing"
		moved = int32(0)
	)
	ctx := testkit.Context(t, 60*time.Second)
	e := newEnv(t, "")
	e.createTopic(ctx, topic, 3)

	// A client that was connected before the node existed.
	producer := e.client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var want []string
	produce := func(prefix string, n int) {
		t.Helper()
		for i := range n {
			v := fmt.Sprintf("%s-%03d", prefix, i)
			want = append(want, v)
			r := &kgo.Record{Partition: moved, Value: []byte(v)}
			if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatalf("produce %s: %v", v, err)
			}
		}
	}
	produce("before", 50)

	newNode, upstreamPort, err := e.cluster.AddNode(-1, 0)
	if err != nil {
		t.Fatalf("add node: %v", err)
	}
	if newNode != 3 {
		t.Fatalf("new node id %d, want 3", newNode)
	}
	upstreamAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(upstreamPort))
	if err := e.cluster.MoveTopicPartition(topic, moved, newNode); err != nil {
		t.Fatalf("move %s/%d to node %d: %v", topic, moved, newNode, err)
	}
	produce("after", 50)
	if l := e.cluster.LeaderFor(topic, moved); l != newNode {
		t.Fatalf("partition %d led by %d after the move, want %d", moved, l, newNode)
	}

	// (a) kproxy opened a listener for the new node.
	proxyAddr, ok := e.proxy.BrokerAddr(newNode)
	if !ok {
		t.Fatalf("kproxy has no listener for node %d", newNode)
	}
	if proxyAddr == upstreamAddr {
		t.Fatalf("kproxy advertises node %d at its upstream address %s", newNode, upstreamAddr)
	}
	if c, err := net.DialTimeout("tcp", proxyAddr, time.Second); err != nil {
		t.Errorf("kproxy's listener for node %d at %s: %v", newNode, proxyAddr, err)
	} else {
		c.Close()
	}

	// (b) a fresh client's metadata lists the node at kproxy's address.
	adm := kadm.NewClient(e.client())
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatalf("metadata: %v", err)
	}
	var found bool
	for _, b := range md.Brokers {
		addr := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
		if b.NodeID == newNode {
			found = true
			if addr != proxyAddr {
				t.Errorf("metadata lists node %d at %s, want kproxy's %s", newNode, addr, proxyAddr)
			}
		}
	}
	if !found {
		t.Errorf("metadata lists no node %d: %v", newNode, md.Brokers)
	}
	if l := md.Topics[topic].Partitions[moved].Leader; l != newNode {
		t.Errorf("metadata says partition %d is led by %d, want %d", moved, l, newNode)
	}

	// DescribeCluster, the admin view of the brokers, agrees.
	dc, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, e.client())
	if err != nil || dc.ErrorCode != 0 {
		t.Fatalf("describe cluster: %v (error code %d)", err, dc.ErrorCode)
	}
	found = false
	for _, b := range dc.Brokers {
		if b.NodeID == newNode {
			found = true
			if addr := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))); addr != proxyAddr {
				t.Errorf("DescribeCluster lists node %d at %s, want kproxy's %s", newNode, addr, proxyAddr)
			}
		}
	}
	if !found {
		t.Errorf("DescribeCluster lists no node %d", newNode)
	}

	// (c) the moved partition is consumed, in full, through kproxy.
	got := e.consumeValues(ctx, topic, moved, len(want))
	checkExactly(t, "partition "+strconv.Itoa(int(moved)), got, want)
	if n := e.sniff.Dialed()[proxyAddr]; n == 0 {
		t.Errorf("no client dialed kproxy's listener for node %d (%s); dialed %v", newNode, proxyAddr, e.sniff.Dialed())
	}

	// A group consumer too (this also makes the clients look up a
	// coordinator, whose address the sniffer checks).
	group := e.client(kgo.ConsumerGroup("growing-group"), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var fromGroup []string
	for _, r := range pollN(ctx, t, group, len(want)) {
		if r.Partition == moved {
			fromGroup = append(fromGroup, string(r.Value))
		}
	}
	checkExactly(t, "group consumer", fromGroup, want)
	e.checkAddrs()
}
