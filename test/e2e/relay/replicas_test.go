package e2e

import (
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// TestReplicasLearnAddedNode: two kproxy replicas in front of one cluster;
// a node joins and only replica A relays a Metadata naming it. Behind a
// balancer the client may connect to that node through replica B, so B
// must open the node's listener too, from its own periodic metadata
// refresh (upstream.metadata_refresh), without any client's help.
func TestReplicasLearnAddedNode(t *testing.T) {
	t.Parallel()
	cluster := testkit.Cluster(t, 1)
	cfg := testkit.Config{Upstream: cluster.ListenAddrs(), UpstreamKeys: "metadata_refresh: 200ms"}.YAML()
	a, b := kproxytest.Start(t, cfg), kproxytest.Start(t, cfg)
	newNode, _, err := cluster.AddNode(-1, 0)
	if err != nil {
		t.Fatalf("add node: %v", err)
	}

	// The client's Metadata goes through A, which opens the listener.
	cl, err := kgo.NewClient(kgo.SeedBrokers(a.BootstrapAddr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).BrokerMetadata(testkit.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.BrokerAddr(newNode); !ok {
		t.Fatalf("replica A relayed metadata naming node %d but has no listener for it", newNode)
	}

	deadline := time.Now().Add(5 * time.Second)
	for {
		if addr, ok := b.BrokerAddr(newNode); ok {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				t.Fatalf("replica B's listener for node %d at %s: %v", newNode, addr, err)
			}
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica B has no listener for node %d 5s after it joined (metadata_refresh 200ms)", newNode)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReplicasShareFetchSession: a fetch session (KIP-227) lives on the
// broker but is its connection's: a session opened through replica A is
// not continued through replica B (nor through another connection to A),
// which answers an incremental fetch naming it as the broker answers an
// unknown id, as when a consumer's connection is re-balanced. The
// client's full fetch then opens a session of its own through B, and the
// one through A keeps working.
func TestReplicasShareFetchSession(t *testing.T) {
	t.Parallel()
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "rep.fs"))
	cfg := testkit.Config{Upstream: cluster.ListenAddrs()}.YAML()
	a, b := kproxytest.Start(t, cfg), kproxytest.Start(t, cfg)
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testkit.Context(t, 20*time.Second)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "rep.fs", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	node := cluster.LeaderFor("rep.fs", 0)
	fetch := func(p *kproxytest.Kproxy, session, epoch int32, topics ...string) *kmsg.FetchResponse {
		addr, ok := p.BrokerAddr(node)
		if !ok {
			t.Fatalf("no listener for node %d", node)
		}
		req := testkit.FetchByName(12, topics...)
		req.MaxWaitMillis = 100
		req.SessionID, req.SessionEpoch = session, epoch
		return testkit.DialRaw(t, addr, "e2e-raw").MustRoundTrip(t, req).(*kmsg.FetchResponse)
	}
	opened := fetch(a, 0, 0, "rep.fs")
	if opened.ErrorCode != 0 || opened.SessionID == 0 {
		t.Fatalf("full fetch through A: error %d, session %d; want a new session", opened.ErrorCode, opened.SessionID)
	}
	next := fetch(b, opened.SessionID, 1)
	if next.ErrorCode != kerr.FetchSessionIDNotFound.Code || next.SessionID != 0 || len(next.Topics) != 0 {
		t.Fatalf("incremental fetch of A's session %d through B: error %d, session %d, %d topics; want FETCH_SESSION_ID_NOT_FOUND, session 0, none",
			opened.SessionID, next.ErrorCode, next.SessionID, len(next.Topics))
	}
	if own := fetch(b, 0, 0, "rep.fs"); own.ErrorCode != 0 || own.SessionID == 0 || own.SessionID == opened.SessionID {
		t.Fatalf("full fetch through B: error %d, session %d; want a new session of its own", own.ErrorCode, own.SessionID)
	}
}
