package tenant

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// A share session (KIP-932) is kept by the broker under group and member
// id, and a member id is no secret. Through kproxy a share session is its
// connection's: another connection naming it (across tenants, whose group
// ids carry distinct prefixes, or between clients of one cluster) is
// answered SHARE_SESSION_NOT_FOUND, as for a session the broker does not
// know, gets no records, and cannot acknowledge or close it.

// sessionShareGroup is the victim's share group, as its clients name it.
const sessionShareGroup = "sg"

// sessionShareJoin makes member a member of the victim's share group,
// subscribed to topic, through c, waiting (20 s at most) for its
// assignment.
func sessionShareJoin(t *testing.T, c *testkit.RawConn, member, topic string) {
	t.Helper()
	testkit.JoinShareGroup(t, c, sessionShareGroup, member, topic)
}

// TestSessionShareHijackAcrossTenants: team-a names team-b's share
// session (the group as team-b names it and as the cluster does, with
// team-b's member id) at guessed epochs, fetching, acknowledging and
// closing; it gets SHARE_SESSION_NOT_FOUND and no records every time, and
// team-b's session keeps working.
func TestSessionShareHijackAcrossTenants(t *testing.T) {
	upstream := advkit.Kfake(t, 1)
	kp := advkit.Start(t, sessionConfig(upstream, nil))
	sessionShareAttack(t, kp.VirtualClusterBootstrap("team-b"), kp.VirtualClusterBootstrap("team-a"),
		[]string{sessionShareGroup, "team-b." + sessionShareGroup})
}

// TestSessionShareHijackBetweenClientsOfOneCluster: without virtual
// clusters the group is shared, and the member id is all another client
// needs; the session is still its connection's.
func TestSessionShareHijackBetweenClientsOfOneCluster(t *testing.T) {
	upstream := advkit.Kfake(t, 1)
	kp := advkit.Start(t, fmt.Sprintf("upstream: {bootstrap_servers: [%q]}\nlisteners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0}\nadmin: {listen: \"127.0.0.1:0\"}\nlog: {level: info, format: json}\n", upstream[0]))
	sessionShareAttack(t, kp.Bootstrap, kp.Bootstrap, []string{sessionShareGroup})
}

// sessionShareAttack: the victim, a client of victimBoot, opens a share
// session; the attacker, a client of attackerBoot, names it as each of
// groups with the victim's member id.
func sessionShareAttack(t *testing.T, victimBoot, attackerBoot string, groups []string) {
	v := sessionCreateVictim(t, victimBoot, "orders")
	owner, _ := sessionBrokerConn(t, victimBoot, v.leader, "victim")
	attacker, _ := sessionBrokerConn(t, attackerBoot, v.leader, "attacker")
	const member = "victim-member-00000000000000000001"
	sessionShareJoin(t, owner, member, v.topic)
	if resp := owner.MustRoundTrip(t, testkit.ShareFetch(sessionShareGroup, member, 0, v.id)).(*kmsg.ShareFetchResponse); resp.ErrorCode != 0 {
		t.Fatalf("victim's share session: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	for _, group := range groups {
		for _, epoch := range []int32{1, 2, 3, -1} {
			resp := attacker.MustRoundTrip(t, testkit.ShareFetch(group, member, epoch, [16]byte{})).(*kmsg.ShareFetchResponse)
			if resp.ErrorCode != kerr.ShareSessionNotFound.Code || len(resp.Topics) != 0 {
				t.Fatalf("attacker's ShareFetch of group %q, the victim's member, epoch %d: %v with %d topics; want SHARE_SESSION_NOT_FOUND and none",
					group, epoch, kerr.ErrorForCode(resp.ErrorCode), len(resp.Topics))
			}
			ack := kmsg.NewPtrShareAcknowledgeRequest()
			g, m := group, member
			ack.GroupID, ack.MemberID, ack.ShareSessionEpoch = &g, &m, epoch
			if resp := attacker.MustRoundTrip(t, ack).(*kmsg.ShareAcknowledgeResponse); resp.ErrorCode != kerr.ShareSessionNotFound.Code {
				t.Fatalf("attacker's ShareAcknowledge of group %q, the victim's member, epoch %d: %v; want SHARE_SESSION_NOT_FOUND",
					group, epoch, kerr.ErrorForCode(resp.ErrorCode))
			}
		}
	}
	if resp := owner.MustRoundTrip(t, testkit.ShareFetch(sessionShareGroup, member, 1, [16]byte{})).(*kmsg.ShareFetchResponse); resp.ErrorCode != 0 {
		t.Fatalf("victim's share session after the attack: %v; want it working", kerr.ErrorForCode(resp.ErrorCode))
	}
}
