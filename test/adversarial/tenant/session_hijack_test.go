package tenant

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// A fetch session (KIP-227) is kept by the broker under its id alone, so
// a tenant that names another tenant's session id in an incremental fetch
// would be served that session's partitions and records, and one that
// names it in a full fetch would close it. Through kproxy a session is its
// connection's: every other connection is answered as the broker answers
// an id it does not know, whatever the id and epoch (so live ids cannot be
// told from dead ones), and cannot close it.

// TestSessionHijackAcrossTenants: team-a, on its own listener for the
// broker that holds team-b's session, scans ids around team-b's and
// guesses epochs; every answer is byte for byte the broker's own answer to
// an unknown id (FETCH_SESSION_ID_NOT_FOUND, session 0, no partitions), and
// never carries team-b's records. Its full fetches naming the id (epoch 0:
// close and recreate, -1: close) leave team-b's session working. With no
// policy anywhere, and with one on the attacker.
func TestSessionHijackAcrossTenants(t *testing.T) {
	for _, tc := range []struct {
		name     string
		policies map[string]string
	}{
		{"no policy", nil},
		{"attacker under a policy", map[string]string{"team-a": "{default: allow}"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			upstream := advkit.Kfake(t, 3)
			kp := advkit.Start(t, sessionConfig(upstream, tc.policies))
			sessionAttack(t, upstream, kp.VirtualClusterBootstrap("team-b"), kp.VirtualClusterBootstrap("team-a"), "orders")
		})
	}
}

// TestSessionHijackBetweenClientsOfOneCluster: without virtual clusters,
// a session is still its connection's: another client of the same
// listener gets the same answers as across tenants.
func TestSessionHijackBetweenClientsOfOneCluster(t *testing.T) {
	upstream := advkit.Kfake(t, 3)
	kp := advkit.Start(t, fmt.Sprintf("upstream: {bootstrap_servers: [%q]}\nlisteners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0}\nadmin: {listen: \"127.0.0.1:0\"}\nlog: {level: info, format: json}\n", upstream[0]))
	sessionAttack(t, upstream, kp.Bootstrap, kp.Bootstrap, "orders")
}

// TestSessionHijackAcrossTenantsRealKafka is the cross-tenant attack in
// front of Apache Kafka, whose session ids are random: the attacker scans
// ids around the victim's and the victim's own, at guessed epochs.
func TestSessionHijackAcrossTenantsRealKafka(t *testing.T) {
	upstream := testkit.RealKafka(t)
	kp := advkit.Start(t, sessionConfig(upstream, nil))
	topic := fmt.Sprintf("session-hijack-%d", time.Now().UnixNano())
	sessionAttack(t, upstream, kp.VirtualClusterBootstrap("team-b"), kp.VirtualClusterBootstrap("team-a"), topic)
}

// sessionAttack runs the attack: the victim, a client of victimBoot,
// opens a fetch session on the broker leading its topic; the attacker, a
// client of attackerBoot, goes for it on the same broker.
func sessionAttack(t *testing.T, upstream []string, victimBoot, attackerBoot, topic string) {
	start := time.Now()
	v := sessionCreateVictim(t, victimBoot, topic)
	t.Logf("victim's topic %s created, its record produced, in %s", topic, time.Since(start))
	owner, version := sessionBrokerConn(t, victimBoot, v.leader, "victim")
	attacker, attackerVersion := sessionBrokerConn(t, attackerBoot, v.leader, "attacker")
	version = min(version, attackerVersion)

	openFrame, opened := sessionAnswer(t, owner, sessionFetch(version, v.id, 0, 0))
	if opened.ErrorCode != 0 || opened.SessionID == 0 || !bytes.Contains(openFrame, v.secret) {
		t.Fatalf("victim's session not opened with its record: %v, session %d", kerr.ErrorForCode(opened.ErrorCode), opened.SessionID)
	}
	session := opened.SessionID

	// What the broker itself answers an id it does not know.
	unknown, ref := sessionAnswer(t, testkit.DialRaw(t, upstream[0], "reference"), sessionFetch(version, [16]byte{}, session^0x2b2b2b2b, 1))
	if ref.ErrorCode != kerr.FetchSessionIDNotFound.Code || ref.SessionID != 0 || len(ref.Topics) != 0 {
		t.Fatalf("the broker's answer to an unknown session id: %v, session %d, %d topics", kerr.ErrorForCode(ref.ErrorCode), ref.SessionID, len(ref.Topics))
	}

	// The scan: ids around the victim's and the victim's own, at epochs
	// the attacker guesses (the victim's next one among them).
	for id := session - 3; id <= session+3; id++ {
		for epoch := int32(1); epoch <= 4; epoch++ {
			frame, resp := sessionAnswer(t, attacker, sessionFetch(version, [16]byte{}, id, epoch))
			if bytes.Contains(frame, v.secret) || len(resp.Topics) != 0 {
				t.Fatalf("attacker naming session %d at epoch %d was served %d topics of the victim's session", id, epoch, len(resp.Topics))
			}
			if !bytes.Equal(frame, unknown) {
				t.Fatalf("attacker naming session %d at epoch %d was answered %v (session %d), not as an unknown id:\n got %x\nwant %x",
					id, epoch, kerr.ErrorForCode(resp.ErrorCode), resp.SessionID, frame, unknown)
			}
		}
	}

	epoch := int32(1)
	victimFetches := func(when string) {
		t.Helper()
		_, resp := sessionAnswer(t, owner, sessionFetch(version, [16]byte{}, session, epoch))
		if resp.ErrorCode != 0 || resp.SessionID != session {
			t.Fatalf("victim's incremental fetch at epoch %d %s: %v, session %d; want its session %d working",
				epoch, when, kerr.ErrorForCode(resp.ErrorCode), resp.SessionID, session)
		}
		epoch++
	}
	victimFetches("after the scan")
	t.Logf("scan answered as an unknown id, %s in", time.Since(start))

	// Full fetches naming the victim's id would close its session.
	for _, full := range []int32{0, -1} {
		frame, resp := sessionAnswer(t, attacker, sessionFetch(version, [16]byte{}, session, full))
		if resp.ErrorCode != 0 || resp.SessionID == session || bytes.Contains(frame, v.secret) {
			t.Fatalf("attacker's full fetch at epoch %d naming session %d: %v, session %d", full, session, kerr.ErrorForCode(resp.ErrorCode), resp.SessionID)
		}
		victimFetches(fmt.Sprintf("after the attacker's full fetch at epoch %d naming it", full))
	}
}
