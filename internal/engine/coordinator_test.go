package engine_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestCoordinatorErrorsCounted has the broker answer a Heartbeat with
// NOT_COORDINATOR and an OffsetCommit with COORDINATOR_LOAD_IN_PROGRESS
// (for each partition, as Kafka does), both relayed as they came, and
// checks kproxy_group_coordinator_errors_total counts each by API and
// error name while a successful JoinGroup counts nothing.
func TestCoordinatorErrorsCounted(t *testing.T) {
	cluster := testkit.Cluster(t, 1)
	cluster.ControlKey(int16(kmsg.Heartbeat), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = kerr.NotCoordinator.Code
		return resp, nil, true
	})
	cluster.ControlKey(int16(kmsg.OffsetCommit), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		req := kreq.(*kmsg.OffsetCommitRequest)
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, rt := range req.Topics {
			topic := kmsg.NewOffsetCommitResponseTopic()
			topic.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				p := kmsg.NewOffsetCommitResponseTopicPartition()
				p.Partition, p.ErrorCode = rp.Partition, kerr.CoordinatorLoadInProgress.Code
				topic.Partitions = append(topic.Partitions, p)
			}
			resp.Topics = append(resp.Topics, topic)
		}
		return resp, nil, true
	})
	kp := testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: cluster.ListenAddrs()}.YAML()})
	c := dialRaw(t, kp.BootstrapAddr())

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.SetVersion(4)
	hb.Group, hb.MemberID = "g", "m"
	for range 2 {
		resp, err := c.recv(hb, c.send(hb))
		if err != nil {
			t.Fatal(err)
		}
		if code := resp.(*kmsg.HeartbeatResponse).ErrorCode; code != kerr.NotCoordinator.Code {
			t.Fatalf("heartbeat answered %d, want the broker's NOT_COORDINATOR", code)
		}
	}
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.SetVersion(8)
	commit.Group, commit.Generation = "g", -1
	topic := kmsg.NewOffsetCommitRequestTopic()
	topic.Topic = "t"
	for p := range int32(3) {
		part := kmsg.NewOffsetCommitRequestTopicPartition()
		part.Partition = p
		topic.Partitions = append(topic.Partitions, part)
	}
	commit.Topics = append(commit.Topics, topic)
	if _, err := c.recv(commit, c.send(commit)); err != nil {
		t.Fatal(err)
	}
	join := kmsg.NewPtrJoinGroupRequest()
	join.SetVersion(5)
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = "other", "consumer", 10000, 10000
	join.Protocols = append(join.Protocols, kmsg.JoinGroupRequestProtocol{Name: "range"})
	if _, err := c.recv(join, c.send(join)); err != nil {
		t.Fatal(err)
	}

	const metric = "kproxy_group_coordinator_errors_total"
	if got := testkit.MetricValue(t, kp.Registry, metric, "api", "Heartbeat", "error", "NOT_COORDINATOR"); got != 2 {
		t.Errorf("%s{api=Heartbeat,error=NOT_COORDINATOR} = %v, want 2", metric, got)
	}
	if got := testkit.MetricValue(t, kp.Registry, metric, "api", "OffsetCommit", "error", "COORDINATOR_LOAD_IN_PROGRESS"); got != 1 {
		t.Errorf("%s{api=OffsetCommit,error=COORDINATOR_LOAD_IN_PROGRESS} = %v, want 1 (one response)", metric, got)
	}
	if got := testkit.MetricValue(t, kp.Registry, metric); got != 3 {
		t.Errorf("%s in all = %v, want 3: the JoinGroup that succeeded counts nothing", metric, got)
	}
}
