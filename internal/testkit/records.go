package testkit

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// RecordBatch encodes an uncompressed, non-idempotent, non-transactional
// v2 record batch of values (keys nil, offset deltas 0, 1, 2, ...,
// timestamps now) with its length and CRC filled in: what a Produce
// request's Records field carries.
func RecordBatch(values ...string) []byte {
	rs := make([]kmsg.Record, len(values))
	for i, v := range values {
		rs[i] = kmsg.Record{OffsetDelta: int32(i), Value: []byte(v)}
	}
	return RecordBatchOf(rs...)
}

// RecordBatchOf is RecordBatch of whole records (keys, headers), their
// offset deltas as given.
func RecordBatchOf(rs ...kmsg.Record) []byte {
	now := time.Now().UnixMilli()
	var recs []byte
	for _, r := range rs {
		enc := r.AppendTo(nil)[1:] // drop the placeholder length (varint 0 is one byte)
		recs = binary.AppendVarint(recs, int64(len(enc)))
		recs = append(recs, enc...)
	}
	b := kmsg.RecordBatch{
		Magic:           2,
		LastOffsetDelta: int32(len(rs) - 1),
		FirstTimestamp:  now,
		MaxTimestamp:    now,
		ProducerID:      -1,
		ProducerEpoch:   -1,
		FirstSequence:   -1,
		NumRecords:      int32(len(rs)),
		Records:         recs,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32c))
	return out
}

// CompressedBatch is RecordBatch(values...) with its records compressed
// with codec (as a producer compresses them), its attributes, length and
// CRC set to match.
func CompressedBatch(t testing.TB, codec kgo.CompressionCodec, values ...string) []byte {
	t.Helper()
	plain := RecordBatch(values...)
	c, err := kgo.DefaultCompressor(codec)
	if err != nil {
		t.Fatal(err)
	}
	if c == nil { // no compression
		return plain
	}
	packed, used := c.Compress(new(bytes.Buffer), plain[61:])
	out := append(bytes.Clone(plain[:61]), packed...)
	binary.BigEndian.PutUint16(out[21:], uint16(used))
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32c))
	return out
}

// BatchRecords are the records of the uncompressed record batches in raw
// (a partition's records in a Fetch or ShareFetch response), failing the
// test on a batch it cannot read or one that is compressed.
func BatchRecords(t testing.TB, raw []byte) []kmsg.Record {
	t.Helper()
	var out []kmsg.Record
	for len(raw) >= 12 {
		size := 12 + int(binary.BigEndian.Uint32(raw[8:12]))
		if size > len(raw) {
			t.Fatalf("record batch of %d bytes in %d", size, len(raw))
		}
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
			if n <= 0 || n+int(length) > len(rs) {
				t.Fatalf("record length %d in %d bytes", length, len(rs))
			}
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
