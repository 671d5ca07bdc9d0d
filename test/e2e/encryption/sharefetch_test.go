package e2eencryption

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/encryption/envelope"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// TestShareFetchDecrypts: a member of a share group (KIP-932) that reads
// an encrypted topic through kproxy with ShareFetch gets the records as
// they were produced, without the marker header.
func TestShareFetchDecrypts(t *testing.T) {
	e := newEnv(t, []string{"payshare"}, section(`    - {match: "pay*", key: "alias/kek"}`, ""),
		func(k *localkms.Server) { k.CreateAlias("alias/kek", k.CreateKey()) })
	ctx := e.ctx()
	details, err := kadm.NewClient(e.direct()).ListTopics(ctx, "payshare")
	if err != nil {
		t.Fatal(err)
	}
	id := [16]byte(details["payshare"].ID)
	c := testkit.DialBroker(t, e.kp.Bootstrap, "sharer", details["payshare"].Partitions[0].Leader)
	const group, member = "sharers", "member-00000000000000000000000001"
	// A share partition starts at its end when first fetched: join and
	// open the share session before producing.
	testkit.JoinShareGroup(t, c, group, member, "payshare")
	var got []kmsg.Record
	got = append(got, testkit.ShareFetchRecords(t, c, testkit.ShareFetch(group, member, 0, id))...)
	p := e.proxied(kgo.DefaultProduceTopic("payshare"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err := p.ProduceSync(ctx, kgo.StringRecord("shared secret")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for epoch := int32(1); len(got) == 0; epoch++ {
		if ctx.Err() != nil {
			t.Fatal("no records by ShareFetch within 30s")
		}
		got = append(got, testkit.ShareFetchRecords(t, c, testkit.ShareFetch(group, member, epoch, [16]byte{}))...)
		time.Sleep(50 * time.Millisecond)
	}
	if len(got) != 1 || string(got[0].Value) != "shared secret" {
		t.Fatalf("ShareFetch handed over %d records, the first %q; want the one produced, decrypted", len(got), got[0].Value)
	}
	for _, h := range got[0].Headers {
		if h.Key == envelope.HeaderName {
			t.Errorf("the record handed over keeps the marker header")
		}
	}
}
