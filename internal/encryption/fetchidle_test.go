package encryption

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/rewrite/records"
)

// fetchBody is the body of a Fetch response of version whose one
// partition holds batches.
func fetchBody(version int16, batches []byte) []byte {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = version
	resp.Topics = []kmsg.FetchResponseTopic{{Topic: "orders", Partitions: []kmsg.FetchResponseTopicPartition{{RecordBatches: batches}}}}
	return resp.AppendTo(nil)
}

// A Fetch response without an encrypted record in an uncompressed batch
// is not decoded for the filter; one with a compressed batch is (its
// records may be encrypted), and its encrypted records are decrypted.
func TestUnencryptedFetchesAreNotDecoded(t *testing.T) {
	f := benchFilter(t)
	var r filter.Registry
	f.Register(&r)
	for _, h := range r.Responses() {
		if h.Key == wire.FetchKey && (h.Need == nil || h.Need(12) != filter.Inspect || h.InspectRaw == nil) {
			t.Fatal("Fetch responses are decoded whatever they hold: no Inspect at v12")
		}
	}
	plain := testkit.RecordBatch("a", "b", "c")
	lz4 := testkit.CompressedBatch(t, kgo.Lz4Compression(), "a", "b", "c")
	if fetchWantsDecoding(12, fetchBody(12, plain)) {
		t.Error("unencrypted uncompressed records: decoded for the filter")
	}
	if !fetchWantsDecoding(12, fetchBody(12, lz4)) {
		t.Error("a compressed batch: not decoded for the filter, which cannot see into it")
	}
	req := testkit.ProduceByName(9, -1, lz4, "orders")
	if v := f.produce(&filter.Conn{}, req); v.Respond != nil || v.Close != nil {
		t.Fatalf("produce refused: %+v", v)
	}
	sealed := req.Topics[0].Partitions[0].Records
	if !fetchWantsDecoding(12, fetchBody(12, sealed)) {
		t.Fatal("encrypted compressed records: not decoded for the filter")
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.Topics = []kmsg.FetchResponseTopic{{Topic: "orders", Partitions: []kmsg.FetchResponseTopicPartition{{RecordBatches: sealed}}}}
	if _, err := f.fetch(resp); err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("fetch: %v, code %d", err, resp.Topics[0].Partitions[0].ErrorCode)
	}
	var got []string
	if _, _, err := records.NewRewriter(1<<20).Rewrite(nil, resp.Topics[0].Partitions[0].RecordBatches, func(_ *records.Batch, r *records.Record) error {
		got = append(got, string(r.Value))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != "a" || got[2] != "c" {
		t.Fatalf("decrypted values %q", got)
	}
	req = testkit.ProduceByName(9, -1, plain, "orders")
	f.produce(&filter.Conn{}, req)
	if !fetchWantsDecoding(12, fetchBody(12, req.Topics[0].Partitions[0].Records)) {
		t.Fatal("encrypted uncompressed records: not decoded for the filter")
	}
}
