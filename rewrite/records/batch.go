package records

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Errors a Rewriter returns, wrapped with where in the records they
// happened; test with errors.Is.
var (
	// ErrMalformed: the bytes do not encode a record batch (a bad length,
	// varint, record count or magic, or a codec Kafka does not define).
	ErrMalformed = errors.New("malformed record batch")
	// ErrCorrupt: a batch's CRC-32C does not match its contents.
	ErrCorrupt = errors.New("record batch CRC mismatch")
	// ErrTooLarge: a batch declares or decompresses to more bytes than
	// the Rewriter's limit.
	ErrTooLarge = errors.New("record batch exceeds the size limit")
)

// Offsets of the fields of a v2 record batch header.
const (
	lengthAt     = 8  // int32: bytes after this field
	magicAt      = 16 // int8; at the same offset in magic 0 and 1 message sets
	crcAt        = 17 // uint32: CRC-32C of everything from attributesAt on
	attributesAt = 21
	headerSize   = 61 // through the record count; the records follow
	// logOverhead is the base offset and length, which the length does
	// not count.
	logOverhead = 12
)

// Attribute bits of a v2 batch.
const (
	codecMask         = 0x07
	transactionalFlag = 0x10
	controlFlag       = 0x20
)

// Codec is a batch's compression codec, as its attributes carry it.
type Codec int8

// The codecs Kafka defines.
const (
	CodecNone Codec = iota
	CodecGzip
	CodecSnappy
	CodecLZ4
	CodecZstd
)

var codecNames = [...]string{"none", "gzip", "snappy", "lz4", "zstd"}

func (c Codec) String() string {
	if c >= 0 && int(c) < len(codecNames) {
		return codecNames[c]
	}
	return fmt.Sprintf("codec(%d)", int8(c))
}

// Batch is the header of a v2 record batch, as read from the wire. A
// rewritten batch keeps every field but Length and CRC.
type Batch struct {
	BaseOffset           int64
	Length               int32
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	FirstTimestamp       int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// Codec is the batch's compression codec.
func (b *Batch) Codec() Codec { return Codec(b.Attributes & codecMask) }

// Transactional reports whether a transactional producer wrote the batch.
func (b *Batch) Transactional() bool { return b.Attributes&transactionalFlag != 0 }

// Control reports whether the batch holds control records (transaction
// markers) rather than data.
func (b *Batch) Control() bool { return b.Attributes&controlFlag != 0 }

// parseBatch reads the header of the v2 batch that is all of raw (at
// least headerSize bytes, length already checked against len(raw)).
func parseBatch(raw []byte) Batch {
	be := binary.BigEndian
	return Batch{
		BaseOffset:           int64(be.Uint64(raw[0:])),
		Length:               int32(be.Uint32(raw[8:])),
		PartitionLeaderEpoch: int32(be.Uint32(raw[12:])),
		Magic:                int8(raw[16]),
		CRC:                  be.Uint32(raw[17:]),
		Attributes:           int16(be.Uint16(raw[21:])),
		LastOffsetDelta:      int32(be.Uint32(raw[23:])),
		FirstTimestamp:       int64(be.Uint64(raw[27:])),
		MaxTimestamp:         int64(be.Uint64(raw[35:])),
		ProducerID:           int64(be.Uint64(raw[43:])),
		ProducerEpoch:        int16(be.Uint16(raw[51:])),
		BaseSequence:         int32(be.Uint32(raw[53:])),
		NumRecords:           int32(be.Uint32(raw[57:])),
	}
}

// CountRecords is the sum of the record counts the complete v2 batch
// headers of src declare, read without checking the batches: enough to
// size an output buffer before a Rewrite.
func CountRecords(src []byte) int {
	n := 0
	for len(src) >= headerSize {
		size := logOverhead + int64(int32(binary.BigEndian.Uint32(src[lengthAt:])))
		if size < headerSize || size > int64(len(src)) {
			break
		}
		if src[magicAt] == 2 {
			n += max(int(int32(binary.BigEndian.Uint32(src[headerSize-4:]))), 0)
		}
		src = src[size:]
	}
	return n
}
