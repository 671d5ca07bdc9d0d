package records_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/kproxy/kproxy/rewrite/records"
)

// TestSplicedValues: values replaced by Spliced placeholders, once each
// placeholder is swapped for its value, are what a franz-go consumer
// reads (so the record and batch lengths and the combined CRC are right),
// whatever codec the batch came with, and the rest is as produced.
func TestSplicedValues(t *testing.T) {
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	forEachStored(t, func(t *testing.T, _ string, raw []byte) {
		values := map[string][]byte{} // placeholder -> value
		var order [][]byte
		fn := func(_ *records.Batch, r *records.Record) error {
			if r.Value == nil || r.OffsetDelta%3 == 1 { // some records stay as they are
				return nil
			}
			value := bytes.Repeat(append([]byte(nil), r.Value...), 700+int(r.OffsetDelta)) // several KiB: multi-byte varints
			ph := rand.Text()[:16]
			values[ph] = value
			order = append(order, []byte(ph))
			r.Spliced = &records.Spliced{Placeholder: []byte(ph), Size: int64(len(value)), CRC: crc32.Checksum(value, castagnoli)}
			return nil
		}
		out, sum, err := records.NewRewriter(limit).Rewrite(nil, raw, fn)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Changed == 0 || len(order) == 0 {
			t.Fatalf("nothing spliced: summary %+v", sum)
		}
		whole := bytes.Clone(out)
		for _, ph := range order {
			at := bytes.Index(whole, ph)
			if at < 0 {
				t.Fatalf("placeholder %s not in the output", ph)
			}
			whole = append(whole[:at:at], append(values[string(ph)], whole[at+len(ph):]...)...)
		}
		before, after := decoded(t, raw), decoded(t, whole)
		if len(after) != len(before) {
			t.Fatalf("%d records out of %d", len(after), len(before))
		}
		spliced := 0
		for i, want := range before {
			got := after[i]
			if !bytes.Equal(got.Value, want.Value) {
				if !bytes.HasPrefix(got.Value, want.Value) || len(got.Value) < 700*len(want.Value) {
					t.Fatalf("record %d: value of %d bytes, neither the original nor its splice", i, len(got.Value))
				}
				spliced++
			}
			if g, w := fmt.Sprintf("%q %v %d %v %d", got.Key, got.Headers, got.Offset, got.Timestamp, got.ProducerID),
				fmt.Sprintf("%q %v %d %v %d", want.Key, want.Headers, want.Offset, want.Timestamp, want.ProducerID); g != w {
				t.Errorf("record %d:\n got %s\nwant %s", i, g, w)
			}
		}
		if spliced != len(order) {
			t.Errorf("%d values spliced, %d placeholders", spliced, len(order))
		}
	})
}
