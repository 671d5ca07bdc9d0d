package records

import (
	"encoding/binary"
	"fmt"
)

// ValueWriter writes a record's new value straight into the rewritten
// batch, instead of into a buffer of the Func's that the Rewriter then
// copies: a Func that transforms every value (encryption) saves a copy of
// each. A Func sets Record.ValueFrom to one; the Rewriter calls ValueLen,
// then AppendValue once, before the Func sees the next record, so the
// writer may hold slices of the record it was given until then.
type ValueWriter interface {
	// ValueLen is the number of bytes AppendValue appends.
	ValueLen() int
	// AppendValue appends the value to dst, which never overlaps the
	// batch read. An error stops the rewrite as the Func's would.
	AppendValue(dst []byte) ([]byte, error)
}

// appendRecordFrom is appendRecord for a record whose value vw writes.
func appendRecordFrom(dst []byte, r *Record, vw ValueWriter) ([]byte, error) {
	valueLen := vw.ValueLen()
	size := 1 + varintLen(r.TimestampDelta) + varintLen(int64(r.OffsetDelta)) +
		bytesLen(r.Key) + varintLen(int64(valueLen)) + valueLen + varintLen(int64(len(r.Headers)))
	for _, h := range r.Headers {
		size += bytesLen(h.Key) + bytesLen(h.Value)
	}
	dst = binary.AppendVarint(dst, int64(size))
	dst = append(dst, byte(r.Attributes))
	dst = binary.AppendVarint(dst, r.TimestampDelta)
	dst = binary.AppendVarint(dst, int64(r.OffsetDelta))
	dst = appendBytes(dst, r.Key)
	dst = binary.AppendVarint(dst, int64(valueLen))
	at := len(dst)
	dst, err := vw.AppendValue(dst)
	if err != nil {
		return dst, err
	}
	if n := len(dst) - at; n != valueLen {
		// The record's lengths are written already: a writer that
		// miscounts would corrupt the batch.
		return dst, fmt.Errorf("value writer appended %d bytes, said %d", n, valueLen)
	}
	dst = binary.AppendVarint(dst, int64(len(r.Headers)))
	for _, h := range r.Headers {
		dst = appendBytes(dst, h.Key)
		dst = appendBytes(dst, h.Value)
	}
	return dst, nil
}
