package testkit

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// JoinShareGroup makes member a member of share group group subscribed to
// topic, through c (ShareGroupHeartbeat v1), and waits up to 20 seconds
// for its assignment, failing the test on an error or without one.
func JoinShareGroup(t testing.TB, c *RawConn, group, member, topic string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		hb := kmsg.NewPtrShareGroupHeartbeatRequest()
		hb.SetVersion(1)
		hb.GroupID, hb.MemberID, hb.SubscribedTopicNames = group, member, []string{topic}
		resp := c.MustRoundTrip(t, hb).(*kmsg.ShareGroupHeartbeatResponse)
		if resp.ErrorCode != 0 {
			t.Fatalf("share group %s heartbeat of %s: %v", group, member, kerr.ErrorForCode(resp.ErrorCode))
		}
		if resp.Assignment != nil && len(resp.Assignment.TopicPartitions) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("share group %s: %s got no assignment in 20s", group, member)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ShareFetch is a v1 ShareFetch of group for member at epoch (waiting
// 10ms at most), adding partition 0 of topic id; none when id is zero, as
// a fetch on an open session that only keeps it going.
func ShareFetch(group, member string, epoch int32, id [16]byte) *kmsg.ShareFetchRequest {
	r := kmsg.NewPtrShareFetchRequest()
	r.SetVersion(1)
	r.GroupID, r.MemberID, r.ShareSessionEpoch = &group, &member, epoch
	r.MaxWaitMillis, r.MinBytes, r.MaxBytes, r.MaxRecords, r.BatchSize = 10, 1, 1<<20, 100, 100
	if id != ([16]byte{}) {
		t := kmsg.NewShareFetchRequestTopic()
		t.TopicID = id
		t.Partitions = append(t.Partitions, kmsg.NewShareFetchRequestTopicPartition())
		r.Topics = append(r.Topics, t)
	}
	return r
}

// ShareFetchRecords sends req on c and returns the records of its
// response, failing the test on an error code.
func ShareFetchRecords(t testing.TB, c *RawConn, req *kmsg.ShareFetchRequest) []kmsg.Record {
	t.Helper()
	resp := c.MustRoundTrip(t, req).(*kmsg.ShareFetchResponse)
	if resp.ErrorCode != 0 {
		t.Fatalf("ShareFetch: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	var out []kmsg.Record
	for _, tp := range resp.Topics {
		for _, pp := range tp.Partitions {
			if pp.ErrorCode != 0 {
				t.Fatalf("ShareFetch of partition %d: %v", pp.Partition, kerr.ErrorForCode(pp.ErrorCode))
			}
			out = append(out, BatchRecords(t, pp.Records)...)
		}
	}
	return out
}

// DialBroker is a raw connection as clientID through a proxy (bootstrap)
// to node, at the address the proxy's metadata gives it.
func DialBroker(t testing.TB, bootstrap, clientID string, node int32) *RawConn {
	t.Helper()
	meta := DialRaw(t, bootstrap, clientID).MustRoundTrip(t, kmsg.NewPtrMetadataRequest()).(*kmsg.MetadataResponse)
	for _, b := range meta.Brokers {
		if b.NodeID == node {
			return DialRaw(t, net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))), clientID)
		}
	}
	t.Fatalf("node %d is not among the proxy's brokers %+v", node, meta.Brokers)
	return nil
}
