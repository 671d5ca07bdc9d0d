package engine_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// shareSessionJoin makes member a member of share group sg subscribed to
// topic, through c, and waits (10 s at most) for its assignment.
func shareSessionJoin(t *testing.T, c *testkit.RawConn, member, topic string) {
	t.Helper()
	testkit.JoinShareGroup(t, c, "sg", member, topic)
}

// A share session is its connection's: another connection naming the
// same group and member at the session's epoch (ShareFetch or
// ShareAcknowledge, closing it included) is answered
// SHARE_SESSION_NOT_FOUND and never reaches the broker; the owner's
// session keeps working.
func TestShareSessionIsItsConnectionsOnly(t *testing.T) {
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "victim"))
	topicID := sessionTopicID(t, cluster.ListenAddrs()[0], "victim")
	p := testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: cluster.ListenAddrs()}.YAML()})
	addr, _ := p.BrokerAddr(0)
	const member = "victim-member-000000000000000000001"
	owner := testkit.DialRaw(t, addr, "owner")
	shareSessionJoin(t, owner, member, "victim")
	if resp := owner.MustRoundTrip(t, testkit.ShareFetch("sg", member, 0, topicID)).(*kmsg.ShareFetchResponse); resp.ErrorCode != 0 {
		t.Fatalf("owner's share session: %v", kerr.ErrorForCode(resp.ErrorCode))
	}

	attacker := testkit.DialRaw(t, addr, "attacker")
	for _, epoch := range []int32{1, 2, -1} {
		resp := attacker.MustRoundTrip(t, testkit.ShareFetch("sg", member, epoch, [16]byte{})).(*kmsg.ShareFetchResponse)
		if resp.ErrorCode != kerr.ShareSessionNotFound.Code || len(resp.Topics) != 0 {
			t.Fatalf("another connection's ShareFetch of the owner's session at epoch %d: %v with %d topics; want SHARE_SESSION_NOT_FOUND and none",
				epoch, kerr.ErrorForCode(resp.ErrorCode), len(resp.Topics))
		}
		ack := kmsg.NewPtrShareAcknowledgeRequest()
		g, m := "sg", member
		ack.GroupID, ack.MemberID, ack.ShareSessionEpoch = &g, &m, epoch
		if resp := attacker.MustRoundTrip(t, ack).(*kmsg.ShareAcknowledgeResponse); resp.ErrorCode != kerr.ShareSessionNotFound.Code {
			t.Fatalf("another connection's ShareAcknowledge of the owner's session at epoch %d: %v; want SHARE_SESSION_NOT_FOUND", epoch, kerr.ErrorForCode(resp.ErrorCode))
		}
	}
	if resp := owner.MustRoundTrip(t, testkit.ShareFetch("sg", member, 1, [16]byte{})).(*kmsg.ShareFetchResponse); resp.ErrorCode != 0 {
		t.Fatalf("owner's share session after the attempts: %v; want it working", kerr.ErrorForCode(resp.ErrorCode))
	}
}
