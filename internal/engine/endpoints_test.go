package engine_test

import (
	"bytes"
	"net"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// upstreamEndpoint is a KIP-951 endpoint naming the upstream itself: the
// address a client must never learn.
func upstreamEndpoint(t *testing.T, cluster *kfake.Cluster) (string, int32) {
	host, port, err := net.SplitHostPort(cluster.ListenAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return host, int32(p)
}

// A Fetch response carrying leader endpoints is streamed with the endpoints
// dropped: the records arrive intact, and no upstream address does.
func TestFetchLeaderEndpointsAreDroppedWhileStreaming(t *testing.T) {
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "t"))
	host, port := upstreamEndpoint(t, cluster)
	records := bytes.Repeat([]byte("record-bytes."), 5000) // large enough to splice
	cluster.ControlKey(wire.FetchKey, func(req kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.SetVersion(req.GetVersion())
		part := kmsg.NewFetchResponseTopicPartition()
		part.ErrorCode = 0
		part.HighWatermark = 10
		part.RecordBatches = records
		part.CurrentLeader.LeaderID = 0
		part.CurrentLeader.LeaderEpoch = 3
		resp.Topics = []kmsg.FetchResponseTopic{{Topic: "t", Partitions: []kmsg.FetchResponseTopicPartition{part}}}
		resp.Brokers = []kmsg.FetchResponseBroker{{NodeID: 0, Host: host, Port: port}}
		return resp, nil, true
	})
	p := testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: cluster.ListenAddrs()}.YAML()})
	addr, _ := p.BrokerAddr(0)
	c := dialRaw(t, addr)

	for _, v := range []int16{12, 16, protocol.MaxVersion(wire.FetchKey)} {
		fetch := longPollFetch("t", 0)
		fetch.SetVersion(v)
		if v >= 13 {
			fetch.Topics[0].TopicID = [16]byte{1}
		}
		corr := c.send(fetch)
		_, resp := c.recvRaw(fetch, corr)
		f := resp.(*kmsg.FetchResponse)
		if len(f.Brokers) != 0 {
			t.Errorf("v%d: client was told %d leader endpoints; want them dropped", v, len(f.Brokers))
		}
		if len(f.Topics) != 1 || !bytes.Equal(f.Topics[0].Partitions[0].RecordBatches, records) {
			t.Fatalf("v%d: records did not arrive intact", v)
		}
		if f.Topics[0].Partitions[0].CurrentLeader.LeaderEpoch != 3 {
			t.Errorf("v%d: partition leader hint lost", v)
		}
	}
}

// A Produce response carrying leader endpoints is decoded and rewritten.
func TestProduceLeaderEndpointsAreRewritten(t *testing.T) {
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "t"))
	host, port := upstreamEndpoint(t, cluster)
	cluster.ControlKey(wire.ProduceKey, func(req kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		resp.SetVersion(req.GetVersion())
		resp.Topics = []kmsg.ProduceResponseTopic{{Topic: "t", Partitions: []kmsg.ProduceResponseTopicPartition{{ErrorCode: 6}}}}
		resp.Brokers = []kmsg.ProduceResponseBroker{{NodeID: 0, Host: host, Port: port}}
		return resp, nil, true
	})
	p := testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: cluster.ListenAddrs()}.YAML()})
	addr, _ := p.BrokerAddr(0)
	c := dialRaw(t, addr)
	for v := int16(9); v <= protocol.MaxVersion(wire.ProduceKey); v++ {
		produce := kmsg.NewPtrProduceRequest()
		produce.SetVersion(v)
		produce.Acks = -1
		produce.TimeoutMillis = 1000
		produce.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0}}}}
		corr := c.send(produce)
		_, resp := c.recvRaw(produce, corr)
		brokers := resp.(*kmsg.ProduceResponse).Brokers
		if len(brokers) != 1 {
			t.Fatalf("v%d: %d leader endpoints, want the 1 rewritten", v, len(brokers))
		}
		if got := net.JoinHostPort(brokers[0].Host, strconv.Itoa(int(brokers[0].Port))); got != addr {
			t.Errorf("v%d: client told leader at %s, want kproxy's %s", v, got, addr)
		}
	}
}
