package e2epolicy

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// shareSessionPolicy lets everyone describe every topic, read the share group sg
// and read pub.*, but not secret.t.
const shareSessionPolicy = `
policy:
  rules:
    - {name: describe-all, principals: ["*"], allow: [describe], topics: ["*"]}
    - {name: share, principals: ["*"], allow: [read], groups: ["sg"], topics: ["pub.*"]}
`

// shareFetch is a v1 ShareFetch of group sg for member at epoch, adding
// partitions 0-2 of each topic id.
func shareFetch(member string, epoch int32, topics ...[16]byte) *kmsg.ShareFetchRequest {
	r := kmsg.NewPtrShareFetchRequest()
	r.SetVersion(1)
	g := "sg"
	r.GroupID, r.MemberID, r.ShareSessionEpoch = &g, &member, epoch
	r.MaxWaitMillis, r.MinBytes, r.MaxBytes, r.MaxRecords, r.BatchSize = 500, 1, 1<<20, 100, 100
	for _, id := range topics {
		t := kmsg.NewShareFetchRequestTopic()
		t.TopicID = id
		for p := range int32(3) {
			tp := kmsg.NewShareFetchRequestTopicPartition()
			tp.Partition = p
			t.Partitions = append(t.Partitions, tp)
		}
		r.Topics = append(r.Topics, t)
	}
	return r
}

// shareRecordBytes is how many record bytes resp carries.
func shareRecordBytes(resp *kmsg.ShareFetchResponse) int {
	n := 0
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			n += len(p.Records)
		}
	}
	return n
}

// TestShareSessionHijackGetsNothing: a victim member of share group sg
// reads secret.t in a share session it opened on the broker itself. A
// principal that may read sg but not secret.t sends, through kproxy, a
// ShareFetch with the victim's member id (ShareGroupDescribe shows it) and
// session epoch, naming no topic: the broker would acquire and return
// secret.t's records; kproxy answers SHARE_SESSION_NOT_FOUND and none.
func TestShareSessionHijackGetsNothing(t *testing.T) {
	e := newEnv(t, 1, []string{"secret.t", "pub.t"}, shareSessionPolicy)
	ctx := testkit.Context(t, 30*time.Second)
	details, err := e.direct().ListTopics(ctx, "secret.t")
	if err != nil {
		t.Fatal(err)
	}
	secretID := [16]byte(details["secret.t"].ID)

	victim := testkit.DialRaw(t, e.cluster.ListenAddrs()[0], "victim")
	const member = "victim-member-0000000000000000000001"
	for joined, deadline := false, time.Now().Add(10*time.Second); !joined; {
		hb := kmsg.NewPtrShareGroupHeartbeatRequest()
		hb.SetVersion(1)
		hb.GroupID, hb.MemberID, hb.SubscribedTopicNames = "sg", member, []string{"secret.t"}
		resp := victim.MustRoundTrip(t, hb).(*kmsg.ShareGroupHeartbeatResponse)
		if resp.ErrorCode != 0 {
			t.Fatalf("victim heartbeat: %s", kerrName(resp.ErrorCode))
		}
		joined = resp.Assignment != nil && len(resp.Assignment.TopicPartitions) > 0
		if time.Now().After(deadline) {
			t.Fatal("victim got no assignment")
		}
		time.Sleep(50 * time.Millisecond)
	}
	opened := victim.MustRoundTrip(t, shareFetch(member, 0, secretID)).(*kmsg.ShareFetchResponse)
	if opened.ErrorCode != 0 {
		t.Fatalf("victim's share session: %s", kerrName(opened.ErrorCode))
	}
	e.produceDirect(ctx, "secret.t", "secret", 6)

	attacker := testkit.DialRaw(t, e.proxy.BootstrapAddr(), "attacker")
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(12)
	attacker.MustRoundTrip(t, md) // kproxy learns the topic ids, as from any client
	resp := attacker.MustRoundTrip(t, shareFetch(member, 1)).(*kmsg.ShareFetchResponse)
	if n := shareRecordBytes(resp); n > 0 {
		t.Errorf("the victim's share session delivered %d bytes of secret.t records to a principal that may not read it", n)
	}
	if resp.ErrorCode != kerr.ShareSessionNotFound.Code || len(resp.Topics) != 0 {
		t.Errorf("hijack answered %s with %d topics, want SHARE_SESSION_NOT_FOUND and none", kerrName(resp.ErrorCode), len(resp.Topics))
	}
}

// TestShareConsumerThroughReadPolicy: a franz-go share consumer reading
// through a read policy (every ShareFetch answer checked for unnamed
// topics) gets and acknowledges every record once.
func TestShareConsumerThroughReadPolicy(t *testing.T) {
	e := newEnv(t, 1, []string{"pub.t", "secret.t"}, shareSessionPolicy)
	ctx := testkit.Context(t, 30*time.Second)
	e.cluster.SetGroupConfigs("sg", map[string]string{"share.auto.offset.reset": "earliest"})
	e.produceDirect(ctx, "pub.t", "share", 30)
	cl := e.client("share-reader", kgo.ConsumeTopics("pub.t"), kgo.ShareGroup("sg"))
	seen := map[string]int{}
	for len(seen) < 30 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of 30 distinct records: %v", len(seen), ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("share fetch %s/%d: %v", topic, p, err) })
		for _, r := range fs.Records() {
			seen[string(r.Value)]++
			r.Ack(kgo.AckAccept)
		}
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := cl.FlushAcks(fctx); err != nil {
			t.Fatalf("acknowledge: %v", err)
		}
		cancel()
	}
	for i := range 30 {
		if v := fmt.Sprintf("share-%d", i); seen[v] != 1 {
			t.Errorf("record %s delivered %d times, want once", v, seen[v])
		}
	}
}
