package records

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
)

// Spliced stands, in a Record a Func changes, for a value too large to
// hold in memory, such as a large message fetched from object storage:
// the encoded record carries Placeholder where the value's bytes belong,
// and whoever writes the batch out puts the value there (kproxy's engine
// does it for a placeholder a filter.Splicer gave). The record's length,
// the batch's length and the batch's CRC-32C are those of the record
// with its real value: the CRC is combined from the bytes around the
// placeholder and CRC, without the value.
//
// A batch with a spliced record is written uncompressed (its attributes'
// codec bits cleared): a client decompresses per batch as the attributes
// say, and a compressed batch's CRC could not be had without the
// compressed value.
type Spliced struct {
	// Placeholder is what the encoding carries in the value's place; it
	// must be unpredictable to whoever wrote the other bytes (at least 16
	// random bytes) so that only the splicer finds it.
	Placeholder []byte
	// Size is the value's length in bytes.
	Size int64
	// CRC is the value's CRC-32C (Castagnoli), as hash/crc32 computes it.
	CRC uint32
}

// splicedAt is a Spliced placed in Rewriter.encoded at byte at.
type splicedAt struct {
	at int
	s  Spliced
}

// appendSplicedRecord appends r, whose value is s, in the v2 record
// encoding, with s.Placeholder where the value's bytes go, and returns
// where in dst the placeholder starts.
func appendSplicedRecord(dst []byte, r *Record, s *Spliced) ([]byte, int) {
	size := 1 + varintLen(r.TimestampDelta) + varintLen(int64(r.OffsetDelta)) +
		bytesLen(r.Key) + varintLen(s.Size) + varintLen(int64(len(r.Headers)))
	for _, h := range r.Headers {
		size += bytesLen(h.Key) + bytesLen(h.Value)
	}
	dst = binary.AppendVarint(dst, int64(size)+s.Size)
	dst = append(dst, byte(r.Attributes))
	dst = binary.AppendVarint(dst, r.TimestampDelta)
	dst = binary.AppendVarint(dst, int64(r.OffsetDelta))
	dst = appendBytes(dst, r.Key)
	dst = binary.AppendVarint(dst, s.Size)
	at := len(dst)
	dst = append(dst, s.Placeholder...)
	dst = binary.AppendVarint(dst, int64(len(r.Headers)))
	for _, h := range r.Headers {
		dst = appendBytes(dst, h.Key)
		dst = appendBytes(dst, h.Value)
	}
	return dst, at
}

// finishSpliced sets the length and CRC of batch (a header and its
// uncompressed records, whose spliced values are at spliced, offsets into
// the records) to those the records make with their real values, and
// clears its codec bits.
func finishSpliced(batch []byte, spliced []splicedAt) error {
	length := int64(len(batch) - logOverhead)
	for _, s := range spliced {
		length += s.s.Size - int64(len(s.s.Placeholder))
	}
	if length > math.MaxInt32 {
		return fmt.Errorf("%w: batch of %d bytes with its spliced values", ErrTooLarge, length)
	}
	be := binary.BigEndian
	be.PutUint32(batch[lengthAt:], uint32(length))
	be.PutUint16(batch[attributesAt:], be.Uint16(batch[attributesAt:])&^codecMask)
	crc, from := uint32(0), attributesAt
	for _, s := range spliced {
		crc = crc32.Update(crc, castagnoli, batch[from:headerSize+s.at])
		crc = crc32cCombine(crc, s.s.CRC, s.s.Size)
		from = headerSize + s.at + len(s.s.Placeholder)
	}
	be.PutUint32(batch[crcAt:], crc32.Update(crc, castagnoli, batch[from:]))
	return nil
}
