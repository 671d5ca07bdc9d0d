package engine_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestRelayedPartitionErrorsCounted has the broker answer a Produce (v11:
// inspected, relayed as it came) and a Fetch (v16: streamed, walked for
// leader endpoints) with NOT_LEADER_FOR_PARTITION on two of three
// partitions, and checks that kproxy_response_errors_total counts each
// erring partition once although kproxy decoded neither response.
func TestRelayedPartitionErrorsCounted(t *testing.T) {
	notLeader := func(p int32) int16 {
		if p == 0 {
			return 0
		}
		return kerr.NotLeaderForPartition.Code
	}
	cluster := testkit.Cluster(t, 1)
	cluster.ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		resp := kreq.ResponseKind().(*kmsg.ProduceResponse)
		topic := kmsg.NewProduceResponseTopic()
		topic.Topic = "t"
		for p := range int32(3) {
			part := kmsg.NewProduceResponseTopicPartition()
			part.Partition, part.ErrorCode = p, notLeader(p)
			topic.Partitions = append(topic.Partitions, part)
		}
		resp.Topics = append(resp.Topics, topic)
		return resp, nil, true
	})
	cluster.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		resp := kreq.ResponseKind().(*kmsg.FetchResponse)
		topic := kmsg.NewFetchResponseTopic()
		topic.TopicID = [16]byte{1}
		for p := range int32(3) {
			part := kmsg.NewFetchResponseTopicPartition()
			part.Partition, part.ErrorCode = p, notLeader(p)
			topic.Partitions = append(topic.Partitions, part)
		}
		resp.Topics = append(resp.Topics, topic)
		return resp, nil, true
	})
	kp := testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: cluster.ListenAddrs()}.YAML()})
	c := dialRaw(t, kp.BootstrapAddr())

	produce := kmsg.NewPtrProduceRequest()
	produce.SetVersion(11)
	produce.Acks, produce.TimeoutMillis = -1, 1000
	fetch := kmsg.NewPtrFetchRequest()
	fetch.SetVersion(16)
	fetch.MaxWaitMillis, fetch.MaxBytes = 1, 1<<20
	for _, req := range []kmsg.Request{produce, fetch} {
		resp, err := c.recv(req, c.send(req))
		if err != nil {
			t.Fatal(err)
		}
		if n := erringPartitions(resp); n != 2 {
			t.Fatalf("%s response reached the client with %d erring partitions, want the broker's 2", kmsg.NameForKey(req.Key()), n)
		}
	}

	const metric = "kproxy_response_errors_total"
	for _, api := range []string{"Produce", "Fetch"} {
		if got := testkit.MetricValue(t, kp.Registry, metric, "api", api, "error", "NOT_LEADER_FOR_PARTITION"); got != 2 {
			t.Errorf("%s{api=%s,error=NOT_LEADER_FOR_PARTITION} = %v, want 2 (one per erring partition)", metric, api, got)
		}
	}
}

func erringPartitions(resp kmsg.Response) int {
	n := 0
	switch r := resp.(type) {
	case *kmsg.ProduceResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					n++
				}
			}
		}
	case *kmsg.FetchResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					n++
				}
			}
		}
	}
	return n
}
