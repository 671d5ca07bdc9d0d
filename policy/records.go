package policy

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// batchInfo is what governance reads from one record batch header, without
// decompressing anything.
type batchInfo struct {
	size          int   // bytes on the wire, header included
	codec         uint8 // attributes bits 0-2: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd
	transactional bool  // attributes bit 4 (v2 batches only)
	producerID    int64 // -1 when the producer is not idempotent
}

// Record batch layout (magic 2): baseOffset int64, batchLength int32,
// partitionLeaderEpoch int32, magic int8, crc uint32, attributes int16,
// lastOffsetDelta int32, firstTimestamp int64, maxTimestamp int64,
// producerId int64, ... Legacy message sets (magic 0 and 1) share the
// first twelve bytes (offset int64, size int32), then crc uint32, magic
// int8, attributes int8.
const (
	batchLengthOffset = 8
	batchPrefixLen    = 12 // baseOffset + batchLength: not counted in batchLength
	magicOffset       = 16
	attributesOffset  = 21
	producerIDOffset  = 43
	v2HeaderLen       = 61
	legacyAttrOffset  = 17
)

var errShortBatch = errors.New("record batch shorter than its header")

// forEachBatch calls fn for every batch in records, a partition's Records
// field of a Produce request, stopping at the first error fn returns.
func forEachBatch(records []byte, fn func(batchInfo) error) error {
	for off := 0; off < len(records); {
		b := records[off:]
		if len(b) < magicOffset+2 {
			return fmt.Errorf("batch at byte %d: %w", off, errShortBatch)
		}
		length := int(int32(binary.BigEndian.Uint32(b[batchLengthOffset:])))
		size := batchPrefixLen + length
		if length < 0 || size > len(b) {
			return fmt.Errorf("batch at byte %d: length %d overruns the %d bytes left: %w", off, length, len(b), errShortBatch)
		}
		info := batchInfo{size: size, producerID: -1}
		switch magic := int8(b[magicOffset]); magic {
		case 2:
			if size < v2HeaderLen {
				return fmt.Errorf("v2 batch at byte %d: %w", off, errShortBatch)
			}
			attrs := binary.BigEndian.Uint16(b[attributesOffset:])
			info.codec = uint8(attrs & 0x7)
			info.transactional = attrs&0x10 != 0
			info.producerID = int64(binary.BigEndian.Uint64(b[producerIDOffset:]))
		case 0, 1:
			info.codec = b[legacyAttrOffset] & 0x7
		default:
			return fmt.Errorf("batch at byte %d: unknown magic %d", off, magic)
		}
		if err := fn(info); err != nil {
			return err
		}
		off += size
	}
	return nil
}

// hasTransactionalBatch reports whether any batch in records is marked
// transactional, as Kafka's ProduceRequest.hasTransactionalRecords does.
// Malformed records are left for the broker to reject.
func hasTransactionalBatch(records []byte) bool {
	found := false
	forEachBatch(records, func(b batchInfo) error {
		if b.transactional {
			found = true
			return errStop
		}
		return nil
	})
	return found
}

var errStop = errors.New("stop")

// batchSummary is what the produce governance checks need from all of a
// partition's batches, read in one walk: the union of their codecs (a
// bitset over codec numbers, as allowed_compression is), the largest
// batch, and whether any is transactional or has no producer id. Like
// forEachBatch's callers, it covers the batches before a malformation.
type batchSummary struct {
	codecs            uint8
	maxSize           int
	transactional     bool
	withoutProducerID bool
}

func summarizeBatches(records []byte) batchSummary {
	var s batchSummary
	forEachBatch(records, func(b batchInfo) error {
		s.codecs |= 1 << b.codec
		s.maxSize = max(s.maxSize, b.size)
		s.transactional = s.transactional || b.transactional
		s.withoutProducerID = s.withoutProducerID || b.producerID < 0
		return nil
	})
	return s
}
