package lowpriv

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestLowPrivCannotHijackFetchSession: a client with its own access to the
// cluster opens a fetch session on the secret topic; the principal, given
// that session's id, sends an incremental fetch of it through kproxy to the
// same broker. kproxy keeps no fetch session under a policy: it answers as
// a broker answers a session it does not know (FETCH_SESSION_ID_NOT_FOUND,
// no partitions), and the fetch never reaches the cluster, where the
// session exists.
func TestLowPrivCannotHijackFetchSession(t *testing.T) {
	e := startLowprivEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// A record in partition 0, and that partition's leader.
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.cluster.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: secretTopic, Partition: 0, Value: []byte(secretRecordValue + "-session")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	md, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	leader, leaderAddr := int32(-1), ""
	for _, tp := range md.Topics {
		for _, p := range tp.Partitions {
			if deref(tp.Topic) == secretTopic && p.Partition == 0 {
				leader = p.Leader
			}
		}
	}
	for _, b := range md.Brokers {
		if b.NodeID == leader {
			leaderAddr = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
		}
	}
	if leaderAddr == "" {
		t.Fatalf("no leader for %s/0 in %+v", secretTopic, md)
	}

	// The session, opened directly on the leader (a full fetch with epoch 0).
	owner := testkit.DialRaw(t, leaderAddr, "session-owner")
	open := testkit.FetchByName(12, secretTopic)
	open.SessionEpoch = 0
	opened := owner.MustRoundTrip(t, open).(*kmsg.FetchResponse)
	if opened.SessionID == 0 || opened.ErrorCode != 0 {
		t.Fatalf("the cluster opened no fetch session: error %d, session %d", opened.ErrorCode, opened.SessionID)
	}

	// The principal continues it through kproxy's port for that broker.
	c := e.dial()
	versions := c.Versions(t)
	proxyLeader := e.dialTo(e.brokers(t, c, versions)[leader])
	hijack := kmsg.NewPtrFetchRequest()
	hijack.SetVersion(12)
	hijack.MaxWaitMillis, hijack.MaxBytes = 10, 1<<20
	hijack.SessionID, hijack.SessionEpoch = opened.SessionID, 1
	before := e.seen.count(hijack.Key())
	frame, resp := e.roundTrip(t, proxyLeader, hijack)
	r := resp.(*kmsg.FetchResponse)
	if r.ErrorCode != kerr.FetchSessionIDNotFound.Code || len(r.Topics) != 0 || r.SessionID != 0 {
		t.Errorf("the hijacked session answered error %d, session %d, %d topics; want FETCH_SESSION_ID_NOT_FOUND, session 0, none", r.ErrorCode, r.SessionID, len(r.Topics))
	}
	e.noLeaks(t, "the hijacked session", frame, true)
	if e.seen.count(hijack.Key()) != before {
		t.Error("the hijacking fetch reached the cluster")
	}

	// What forwarding it would have done: the cluster serves the session
	// to anyone who names it.
	direct := testkit.DialRaw(t, leaderAddr, "session-hijacker")
	if r := direct.MustRoundTrip(t, hijack).(*kmsg.FetchResponse); r.ErrorCode != 0 || r.SessionID != opened.SessionID {
		t.Errorf("the cluster itself refuses the hijack (error %d, session %d): this test shows nothing", r.ErrorCode, r.SessionID)
	}
}
