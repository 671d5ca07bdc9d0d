package e2elargemessages

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/largemessage/pointer"
	"github.com/kproxy/kproxy/internal/testkit"
)

// TestShareFetchResolves: a member of a share group (KIP-932) that reads
// a topic with offload through kproxy with ShareFetch gets the offloaded
// value whole (SHA-256) with the record's own headers, where the cluster
// holds a pointer.
func TestShareFetchResolves(t *testing.T) {
	e := newEnv(t, []string{"media.shared"}, section(`    - {match: "media.*", threshold_bytes: 1048576}`, ""))
	ctx := e.ctx()
	details, err := kadm.NewClient(e.direct()).ListTopics(ctx, "media.shared")
	if err != nil {
		t.Fatal(err)
	}
	id := [16]byte(details["media.shared"].ID)
	c := testkit.DialBroker(t, e.kp.Bootstrap, "sharer", details["media.shared"].Partitions[0].Leader)
	const group, member = "sharers", "member-00000000000000000000000001"
	// A share partition starts at its end when first fetched: join and
	// open the share session before producing.
	testkit.JoinShareGroup(t, c, group, member, "media.shared")
	got := testkit.ShareFetchRecords(t, c, testkit.ShareFetch(group, member, 0, id))
	sent := value(7, 2<<20+17)
	rec := &kgo.Record{Topic: "media.shared", Key: []byte("clip"), Value: sent, Headers: []kgo.RecordHeader{{Key: "origin", Value: []byte("camera-1")}}}
	if err := e.proxied(append(producerSizes(), kgo.ProducerBatchCompression(kgo.NoCompression()))...).ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for epoch := int32(1); len(got) == 0; epoch++ {
		if ctx.Err() != nil {
			t.Fatal("no records by ShareFetch in time")
		}
		got = append(got, testkit.ShareFetchRecords(t, c, testkit.ShareFetch(group, member, epoch, [16]byte{}))...)
		time.Sleep(50 * time.Millisecond)
	}
	if len(got) != 1 || digest(got[0].Value) != digest(sent) || string(got[0].Key) != "clip" {
		t.Fatalf("ShareFetch handed over %d records, the first of %d bytes; want the one produced, %d bytes, resolved", len(got), len(got[0].Value), len(sent))
	}
	if len(got[0].Headers) != 1 || got[0].Headers[0].Key != "origin" || string(got[0].Headers[0].Value) != "camera-1" {
		t.Errorf("headers %+v, want the record's own (origin=camera-1)", got[0].Headers)
	}
	stored := consume(t, ctx, e.direct(kgo.ConsumeTopics("media.shared")), 1)
	if !pointer.Detect(stored[0].Value) {
		t.Errorf("the cluster holds %d bytes, not a pointer", len(stored[0].Value))
	}
}
