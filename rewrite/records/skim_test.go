package records_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/rewrite/records"
)

// largeOrNamed is AnyLargeValueOrHeader's question put to AnyRecord.
func largeOrNamed(recs []byte, maxValue int64, key []byte) bool {
	return records.AnyRecord(recs, func(r records.RawRecord) bool {
		return int64(len(r.Value)) > maxValue || r.HasHeader(key)
	})
}

// AnyLargeValueOrHeader finds a value above the bound and a header of
// the name in real batches, and answers as AnyRecord does for every
// records area, those it cannot frame included.
func TestAnyLargeValueOrHeaderAgreesWithAnyRecord(t *testing.T) {
	key := []byte("LFS_BLOB")
	rs := testRecords(5)
	rs[1].Value = bytes.Repeat([]byte{'x'}, 300) // two-byte length varints
	rs[3].Value = nil                            // a tombstone
	areas := map[string][]byte{}
	plainArea := func(name string, rs []*kgo.Record) {
		records.PassesUnread(storedBatches(t, false, rs, kgo.ProducerBatchCompression(kgo.NoCompression())), func(recs []byte) bool {
			areas[name] = append(areas[name], recs...) // each batch's records, one after the other
			return true
		})
	}
	plainArea("no header", rs)
	named := append([]*kgo.Record(nil), rs...)
	named[4] = &kgo.Record{Topic: rs[4].Topic, Value: []byte("v"), Headers: []kgo.RecordHeader{{Key: "other", Value: []byte("1")}, {Key: string(key)}}}
	plainArea("the header on the last record", named)
	record := func(fields ...byte) []byte { return append(binary.AppendVarint(nil, int64(len(fields))), fields...) }
	whole := record(0, 0, 0, 2, 'k', 4, 'v', 'v', 0)
	areas["cut short"] = whole[:len(whole)-1]
	areas["length beyond the area"] = append(binary.AppendVarint(nil, 100), whole[1:]...)
	areas["a key longer than the record"] = record(0, 0, 0, 20, 'k', 4, 'v', 'v', 0)
	areas["a header count with no header"] = record(0, 0, 0, 2, 'k', 4, 'v', 'v', 2)
	areas["no header count"] = record(0, 0, 0, 2, 'k', 4, 'v', 'v')
	areas["a timestamp delta overflowing 64 bits"] = record(0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 2, 'k', 4, 'v', 'v', 0)
	areas["bad varint"] = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	for name, recs := range areas {
		for _, maxValue := range []int64{0, 1, 100, 299, 300, 1 << 20} {
			if got, want := records.AnyLargeValueOrHeader(recs, maxValue, key), largeOrNamed(recs, maxValue, key); got != want {
				t.Errorf("%s, values above %d: AnyLargeValueOrHeader %v, AnyRecord %v", name, maxValue, got, want)
			}
		}
	}
	for _, tc := range []struct {
		area     string
		maxValue int64
		want     bool
	}{
		{"no header", 299, true},
		{"no header", 300, false},
		{"the header on the last record", 1 << 20, true},
	} {
		if got := records.AnyLargeValueOrHeader(areas[tc.area], tc.maxValue, key); got != tc.want {
			t.Errorf("%s, values above %d: %v, want %v", tc.area, tc.maxValue, got, tc.want)
		}
	}
	if got := records.SkimBeatsSearch(areas["no header"]); got {
		t.Error("SkimBeatsSearch for records of a few bytes")
	}
}

// FuzzAnyLargeValueOrHeader: whatever the bytes, AnyLargeValueOrHeader
// and AnyValue answer as AnyRecord asked the same question does, and
// never panic.
func FuzzAnyLargeValueOrHeader(f *testing.F) {
	record := func(fields ...byte) []byte { return append(binary.AppendVarint(nil, int64(len(fields))), fields...) }
	f.Add(record(0, 0, 0, 2, 'k', 4, 'v', 'v', 0), int64(1), []byte("h"))
	f.Add(record(0, 0, 0, 1, 4, 'v', 'v', 2, 2, 'h', 0), int64(8), []byte("h"))
	f.Add(append(record(0, 0x80, 1, 0, 1, 1), record(0, 0, 2, 1, 0x80, 0x01)...), int64(-1), []byte{})
	f.Fuzz(func(t *testing.T, recs []byte, maxValue int64, key []byte) {
		if got, want := records.AnyLargeValueOrHeader(recs, maxValue, key), largeOrNamed(recs, maxValue, key); got != want {
			t.Fatalf("AnyLargeValueOrHeader(%x, %d, %q) = %v, AnyRecord %v", recs, maxValue, key, got, want)
		}
		// maxValue's sign picks null values or the others.
		prefixed := func(value []byte) bool { return bytes.HasPrefix(value, key) && (value == nil) == (maxValue < 0) }
		if got, want := records.AnyValue(recs, prefixed), records.AnyRecord(recs, func(r records.RawRecord) bool { return prefixed(r.Value) }); got != want {
			t.Fatalf("AnyValue(%x, values starting %q) = %v, AnyRecord %v", recs, key, got, want)
		}
	})
}
