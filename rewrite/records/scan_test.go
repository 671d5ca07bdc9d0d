package records_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/rewrite/records"
)

// AnyRecord hands each record of an uncompressed batch's records area to
// its predicate with the value as produced (nil for a tombstone) and
// stops at the first match; a records area it cannot frame is a match.
func TestAnyRecordReadsEachValue(t *testing.T) {
	rs := testRecords(5)
	rs[2].Value = bytes.Repeat([]byte{'x'}, 300) // a two-byte length varint
	plain := storedBatches(t, false, rs, kgo.ProducerBatchCompression(kgo.NoCompression()))
	var values [][]byte
	records.PassesUnread(plain, func(recs []byte) bool {
		records.AnyRecord(recs, func(r records.RawRecord) bool {
			values = append(values, r.Value)
			return false
		})
		return true
	})
	if len(values) != len(rs) {
		t.Fatalf("AnyRecord read %d records, want %d", len(values), len(rs))
	}
	for i, r := range rs {
		if !bytes.Equal(values[i], r.Value) || (values[i] == nil) != (r.Value == nil) {
			t.Errorf("record %d: AnyRecord read value %q, want %q", i, values[i], r.Value)
		}
	}
	large := func(recs []byte) bool {
		return !records.AnyRecord(recs, func(r records.RawRecord) bool { return len(r.Value) > 100 })
	}
	if records.PassesUnread(plain, large) {
		t.Error("a 300-byte value: AnyRecord found none above 100 bytes")
	}
	rs[2].Value = []byte("small")
	if !records.PassesUnread(storedBatches(t, false, rs, kgo.ProducerBatchCompression(kgo.NoCompression())), large) {
		t.Error("no value above 100 bytes: AnyRecord found one")
	}
}

// A record whose length runs past the records area, or whose fields run
// past its length, is a match: the caller decodes it and reports it.
func TestAnyRecordMatchesWhatItCannotFrame(t *testing.T) {
	never := func(records.RawRecord) bool { return false }
	record := func(fields ...byte) []byte { return append(binary.AppendVarint(nil, int64(len(fields))), fields...) }
	whole := record(0, 0, 0, 2, 'k', 4, 'v', 'v', 0) // key "k", value "vv", no header
	for _, tc := range []struct {
		name string
		recs []byte
		want bool
	}{
		{"one whole record", whole, false},
		{"two whole records", append(append([]byte{}, whole...), whole...), false},
		{"nothing", nil, false},
		{"cut short", whole[:len(whole)-1], true},
		{"length beyond the area", append(binary.AppendVarint(nil, 100), whole[1:]...), true},
		{"a key longer than the record", record(0, 0, 0, 20, 'k', 4, 'v', 'v', 0), true},
		{"a header count with no header", record(0, 0, 0, 2, 'k', 4, 'v', 'v', 2), false},
		{"bad varint", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, true},
	} {
		if got := records.AnyRecord(tc.recs, never); got != tc.want {
			t.Errorf("%s: AnyRecord %v, want %v", tc.name, got, tc.want)
		}
	}
	// The header count is read by HasHeader, not AnyRecord: a count with
	// no header behind it holds any header, so it is decoded.
	if !records.AnyRecord(record(0, 0, 0, 2, 'k', 4, 'v', 'v', 2), func(r records.RawRecord) bool { return r.HasHeader([]byte("h")) }) {
		t.Error("a header count with no header: HasHeader false")
	}
}
