package records_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/rewrite/records"
)

// TestRewriteMarkedLeavesUnmarkedBatchesUnread: RewriteMarked hands the
// Func only the records of batches that hold the mark: a batch without it
// is passed on as it is, its records never decoded, uncompressed or not;
// a batch with it, in a header of one record, is read and rewritten.
func TestRewriteMarkedLeavesUnmarkedBatchesUnread(t *testing.T) {
	mark := []byte("kproxy.encryption")
	for _, c := range testkit.Codecs() {
		t.Run(c.Name, func(t *testing.T) {
			plain := testkit.CompressedBatch(t, c.Codec, "one", "two", "three")
			rw := records.NewRewriter(limit)
			seen := 0
			fn := func(_ *records.Batch, r *records.Record) error {
				seen++
				r.Value = reversed(r.Value)
				return nil
			}
			out, sum, err := rw.RewriteMarked(nil, plain, mark, fn)
			if err != nil {
				t.Fatal(err)
			}
			if seen != 0 || sum.Unread != 1 || sum.Changed != 0 || &out[0] != &plain[0] {
				t.Fatalf("batch without the mark: Func saw %d records, summary %+v, output is the input: %v", seen, sum, &out[0] == &plain[0])
			}

			marked := markedBatch(mark)
			binary.BigEndian.PutUint64(marked, 3) // after the first batch's offsets 0 to 2
			out, sum, err = rw.RewriteMarked(nil, append(bytes.Clone(plain), marked...), mark, fn)
			if err != nil {
				t.Fatal(err)
			}
			if seen != 2 || sum.Unread != 1 || sum.Changed != 1 {
				t.Fatalf("a batch without the mark then one with it: Func saw %d records, summary %+v", seen, sum)
			}
			if rs := decoded(t, out); len(rs) != 5 || string(rs[0].Value) != "one" || string(rs[3].Value) != "a" || string(rs[4].Value) != "b" {
				t.Fatalf("records %v", rs)
			}
		})
	}
}

// markedBatch is an uncompressed batch of two records, values "a" and
// "b", the first with a header named mark.
func markedBatch(mark []byte) []byte {
	return testkit.RecordBatchOf(
		kmsg.Record{Value: []byte("a"), Headers: []kmsg.Header{{Key: string(mark), Value: []byte("x")}}},
		kmsg.Record{OffsetDelta: 1, Value: []byte("b")})
}
