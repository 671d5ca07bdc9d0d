package testkit

import (
	"encoding/binary"
	"hash/crc32"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// RecordBatch encodes an uncompressed, non-idempotent, non-transactional
// v2 record batch of values (keys nil, offset deltas 0, 1, 2, ...,
// timestamps now) with its length and CRC filled in: what a Produce
// request's Records field carries.
func RecordBatch(values ...string) []byte {
	now := time.Now().UnixMilli()
	var recs []byte
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Value: []byte(v)}
		enc := r.AppendTo(nil)[1:] // drop the placeholder length (varint 0 is one byte)
		recs = binary.AppendVarint(recs, int64(len(enc)))
		recs = append(recs, enc...)
	}
	b := kmsg.RecordBatch{
		Magic:           2,
		LastOffsetDelta: int32(len(values) - 1),
		FirstTimestamp:  now,
		MaxTimestamp:    now,
		ProducerID:      -1,
		ProducerEpoch:   -1,
		FirstSequence:   -1,
		NumRecords:      int32(len(values)),
		Records:         recs,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32c))
	return out
}
