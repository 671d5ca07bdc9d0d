package records_test

import (
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/rewrite/records"
)

// MayHoldHeader looks into the headers of uncompressed batches' records
// and takes any compressed batch, or bytes that are not batches, for one
// that may hold the header; the truncated tail of a size-limited fetch
// counts for nothing, as the Rewriter passes it. A header's name in a
// value or a key is not a header.
func TestMayHoldHeader(t *testing.T) {
	plain := storedBatches(t, false, testRecords(6), kgo.ProducerBatchCompression(kgo.NoCompression()))
	lz4 := storedBatches(t, false, testRecords(6), kgo.ProducerBatchCompression(kgo.Lz4Compression()))
	malformed := binary.BigEndian.AppendUint64(nil, 0)
	malformed = append(malformed, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0) // length 0: not even a magic
	for _, tc := range []struct {
		name string
		src  []byte
		mark string
		want bool
	}{
		{"no records", nil, "trace-id", false},
		{"plain, header absent", plain, "kproxy.encryption", false},
		{"plain, header present", plain, "trace-id", true},
		{"plain, the last header", plain, "empty", true},
		{"plain, the name only in values", plain, "value-a", false},
		{"plain, the name only in keys", plain, "k0", false},
		{"plain, truncated tail", plain[:len(plain)-3], "kproxy.encryption", false},
		{"compressed, mark absent", lz4, "kproxy.encryption", true},
		{"malformed", malformed, "kproxy.encryption", true},
	} {
		if got := records.MayHoldHeader(tc.src, []byte(tc.mark)); got != tc.want {
			t.Errorf("%s: MayHoldHeader %v, want %v", tc.name, got, tc.want)
		}
	}
}

// PassesUnread asks about each uncompressed batch's records area, and
// the answer is whether a Rewrite would have anything to do.
func TestPassesUnreadAsksEachBatch(t *testing.T) {
	plain := storedBatches(t, false, testRecords(6), kgo.ProducerBatchCompression(kgo.NoCompression()))
	asked := 0
	if !records.PassesUnread(plain, func([]byte) bool { asked++; return true }) || asked < 2 {
		t.Errorf("all accepted: PassesUnread false or asked about %d batches, want at least 2", asked)
	}
	if records.PassesUnread(plain, func([]byte) bool { return false }) {
		t.Error("a batch refused: PassesUnread true")
	}
}
