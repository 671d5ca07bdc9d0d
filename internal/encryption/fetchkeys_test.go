package encryption

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/encryption/encryptionconfig"
	"github.com/kproxy/kproxy/internal/encryption/envelope"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/rewrite/records"
)

// A fetched partition whose batches were sealed under different data
// keys (a reload retired the first between them) decrypts whole, with
// every codec: the Opener reused from record to record is the one of the
// record's own wrapped key, also when the batches' records are laid out
// alike in the buffer compressed batches are decompressed into.
func TestFetchOpensBatchesUnderDifferentDataKeys(t *testing.T) {
	f := benchFilter(t)
	cfg := &encryptionconfig.Config{Topics: []encryptionconfig.TopicRule{{Match: "*", Key: "alias/kek", Encrypt: []string{"value"}}}}
	values := make([]string, 20)
	for i := range values {
		values[i] = fmt.Sprintf("value %02d", i)
	}
	for _, c := range testkit.Codecs() {
		var sealed []byte
		var markers [][]byte
		for range 2 {
			req := testkit.ProduceByName(9, -1, testkit.CompressedBatch(t, c.Codec, values...), "orders")
			if v := f.produce(&filter.Conn{}, req); v.Respond != nil || v.Close != nil {
				t.Fatalf("%s: produce refused: %+v", c.Name, v)
			}
			batch := req.Topics[0].Partitions[0].Records
			markers = append(markers, markerOf(t, batch))
			sealed = append(sealed, batch...)
			if err := f.Reload(cfg, zerolog.Nop()); err != nil { // a new data key for the next batch
				t.Fatal(err)
			}
		}
		if bytes.Equal(markers[0], markers[1]) {
			t.Fatalf("%s: both batches sealed under one data key", c.Name)
		}
		resp := kmsg.NewPtrFetchResponse()
		resp.Topics = []kmsg.FetchResponseTopic{{Topic: "orders", Partitions: []kmsg.FetchResponseTopicPartition{{RecordBatches: sealed}}}}
		release, err := f.fetch(resp)
		p := resp.Topics[0].Partitions[0]
		if err != nil || p.ErrorCode != 0 {
			t.Fatalf("%s: fetch of batches under two data keys: %v, error code %d", c.Name, err, p.ErrorCode)
		}
		var got []string
		if _, _, err := records.NewRewriter(1<<20).Rewrite(nil, p.RecordBatches, func(_ *records.Batch, r *records.Record) error {
			got = append(got, string(r.Value))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if want := append(append([]string(nil), values...), values...); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: decrypted %q, want %q", c.Name, got, want)
		}
		if release != nil {
			release()
		}
	}
}

// markerOf is the marker header of the first record of batch.
func markerOf(t *testing.T, batch []byte) []byte {
	t.Helper()
	var marker []byte
	if _, _, err := records.NewRewriter(1<<20).Rewrite(nil, batch, func(_ *records.Batch, r *records.Record) error {
		for _, h := range r.Headers {
			if marker == nil && envelope.IsMarker(h.Key) {
				marker = bytes.Clone(h.Value)
			}
		}
		return nil
	}); err != nil || marker == nil {
		t.Fatalf("no marker in the sealed batch: %v", err)
	}
	return marker
}
