package e2eencryption

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
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
	c := shareConn(t, e.kp.Bootstrap, details["payshare"].Partitions[0].Leader)
	const group, member = "sharers", "member-00000000000000000000000001"
	// A share partition starts at its end when first fetched: join and
	// open the share session before producing.
	testkit.JoinShareGroup(t, c, group, member, "payshare")
	var got []kmsg.Record
	got = append(got, shareFetchRecords(t, c, testkit.ShareFetch(group, member, 0, id))...)
	p := e.proxied(kgo.DefaultProduceTopic("payshare"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err := p.ProduceSync(ctx, kgo.StringRecord("shared secret")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for epoch := int32(1); len(got) == 0; epoch++ {
		if ctx.Err() != nil {
			t.Fatal("no records by ShareFetch within 30s")
		}
		got = append(got, shareFetchRecords(t, c, testkit.ShareFetch(group, member, epoch, [16]byte{}))...)
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

// shareFetchRecords sends req on c and returns the records of its
// response, failing on an error code.
func shareFetchRecords(t *testing.T, c *testkit.RawConn, req *kmsg.ShareFetchRequest) []kmsg.Record {
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
			out = append(out, batchRecords(t, pp.Records)...)
		}
	}
	return out
}

// shareConn is a raw connection through kproxy (bootstrap) to node.
func shareConn(t *testing.T, bootstrap string, node int32) *testkit.RawConn {
	t.Helper()
	meta := testkit.DialRaw(t, bootstrap, "sharer").MustRoundTrip(t, kmsg.NewPtrMetadataRequest()).(*kmsg.MetadataResponse)
	for _, b := range meta.Brokers {
		if b.NodeID == node {
			return testkit.DialRaw(t, fmt.Sprintf("%s:%d", b.Host, b.Port), "sharer")
		}
	}
	t.Fatalf("node %d is not among kproxy's brokers %+v", node, meta.Brokers)
	return nil
}

// batchRecords are the records of the uncompressed record batches in raw.
func batchRecords(t *testing.T, raw []byte) []kmsg.Record {
	t.Helper()
	var out []kmsg.Record
	for len(raw) >= 12 {
		size := 12 + int(binary.BigEndian.Uint32(raw[8:12]))
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw[:size]); err != nil {
			t.Fatalf("record batch: %v", err)
		}
		if b.Attributes&0x07 != 0 {
			t.Fatalf("record batch compressed (attributes %#x); the test produces without compression", b.Attributes)
		}
		rs := b.Records
		for range b.NumRecords {
			length, n := binary.Varint(rs)
			var r kmsg.Record
			if err := r.ReadFrom(rs[:n+int(length)]); err != nil {
				t.Fatalf("record: %v", err)
			}
			out = append(out, r)
			rs = rs[n+int(length):]
		}
		raw = raw[size:]
	}
	return out
}
