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
// values whole (SHA-256) with the records' own headers, where the cluster
// holds pointers: a 2 MiB value, which kproxy holds, and a 6 MiB one,
// which it streams into the response.
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
	sizes := []int{2<<20 + 17, 6<<20 + 5}
	var sent [][]byte
	p := e.proxied(append(producerSizes(), kgo.ProducerBatchCompression(kgo.NoCompression()))...)
	for i, size := range sizes {
		v := value(uint64(7+i), size)
		rec := &kgo.Record{Topic: "media.shared", Key: []byte("clip"), Value: v, Headers: []kgo.RecordHeader{{Key: "origin", Value: []byte("camera-1")}}}
		if err := p.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, v)
	}
	for epoch := int32(1); len(got) < len(sizes); epoch++ {
		if ctx.Err() != nil {
			t.Fatalf("%d of %d records by ShareFetch in time", len(got), len(sizes))
		}
		got = append(got, testkit.ShareFetchRecords(t, c, testkit.ShareFetch(group, member, epoch, [16]byte{}))...)
		time.Sleep(50 * time.Millisecond)
	}
	if len(got) != len(sizes) {
		t.Fatalf("ShareFetch handed over %d records, want %d", len(got), len(sizes))
	}
	for i, r := range got {
		if digest(r.Value) != digest(sent[i]) || string(r.Key) != "clip" {
			t.Errorf("record %d: %d bytes; want the one produced, %d bytes, resolved", i, len(r.Value), len(sent[i]))
		}
		if len(r.Headers) != 1 || r.Headers[0].Key != "origin" || string(r.Headers[0].Value) != "camera-1" {
			t.Errorf("record %d: headers %+v, want the record's own (origin=camera-1)", i, r.Headers)
		}
	}
	for i, r := range testkit.Consume(t, ctx, e.direct(kgo.ConsumeTopics("media.shared")), len(sizes)) {
		if !pointer.Detect(r.Value) {
			t.Errorf("record %d: the cluster holds %d bytes, not a pointer", i, len(r.Value))
		}
	}
}
