package records

import (
	"encoding/binary"
	"fmt"
)

// Record is one record of a batch as a Func sees it. Key, Value and the
// header slices point into the Rewriter's buffers (or the caller's input)
// and must not be written to or kept past the Func's return; a nil slice
// is a null (a tombstone's Value, a record without a key).
//
// To change a record, a Func assigns new slices to Value, Key, header
// values, or Headers itself (adding or removing headers); the Rewriter
// notices the new slices and re-encodes the batch. Attributes,
// TimestampDelta and OffsetDelta are read-only: the batch header depends
// on them, and changes to them are ignored. The slices a Func sets are
// copied before the Func is called again, so it may reuse one buffer for
// every record. Setting Spliced replaces the value by one streamed later
// (see Spliced), setting ValueFrom by one written straight into the output
// (see ValueWriter); Value is then ignored.
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	Key            []byte
	Value          []byte
	Headers        []Header
	Spliced        *Spliced
	ValueFrom      ValueWriter
}

// Header is a record header. Kafka allows a null value (nil) but not a
// null key.
type Header struct {
	Key   []byte
	Value []byte
}

// sameBytes reports whether a and b are the same slice of memory: the
// test for "the Func left this field alone".
func sameBytes(a, b []byte) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

// sameRecord reports whether r still carries the key, value and headers
// it was decoded with (orig, and origHeaders for its headers): the fields
// a Func may change.
func sameRecord(r, orig *Record, origHeaders []Header) bool {
	if r.Spliced != nil || r.ValueFrom != nil || !sameBytes(r.Key, orig.Key) || !sameBytes(r.Value, orig.Value) || len(r.Headers) != len(origHeaders) {
		return false
	}
	for i := range origHeaders {
		if !sameBytes(r.Headers[i].Key, origHeaders[i].Key) || !sameBytes(r.Headers[i].Value, origHeaders[i].Value) {
			return false
		}
	}
	return true
}

// recordReader decodes the records of a batch from b, one at a time.
type recordReader struct {
	b   []byte
	pos int
}

func (rr *recordReader) varint() (int64, error) {
	v, n := binary.Varint(rr.b[rr.pos:])
	if n <= 0 {
		return 0, fmt.Errorf("%w: bad varint at byte %d of the records", ErrMalformed, rr.pos)
	}
	rr.pos += n
	return v, nil
}

// bytes reads a varint length and that many bytes; -1 is null (nil).
func (rr *recordReader) bytes(end int) ([]byte, error) {
	n, err := rr.varint()
	switch {
	case err != nil:
		return nil, err
	case n == -1:
		return nil, nil
	case n < -1 || n > int64(end-rr.pos):
		return nil, fmt.Errorf("%w: length %d at byte %d of the records", ErrMalformed, n, rr.pos)
	}
	b := rr.b[rr.pos : rr.pos+int(n) : rr.pos+int(n)]
	rr.pos += int(n)
	return b, nil
}

// next decodes the record at rr.pos into r, reusing headers for its
// headers, and returns the headers slice (grown if it had to be).
func (rr *recordReader) next(r *Record, headers []Header) ([]Header, error) {
	length, err := rr.varint()
	if err != nil {
		return headers, err
	}
	if length < 1 || length > int64(len(rr.b)-rr.pos) {
		return headers, fmt.Errorf("%w: record length %d at byte %d of the records", ErrMalformed, length, rr.pos)
	}
	end := rr.pos + int(length)
	// Decode within the record only: a field must not reach into the next.
	in := recordReader{b: rr.b[:end], pos: rr.pos}
	rr.pos = end
	return in.fields(r, headers)
}

// fields decodes the fields of the record that ends where rr.b does.
func (rr *recordReader) fields(r *Record, headers []Header) ([]Header, error) {
	end := len(rr.b)
	r.Attributes = int8(rr.b[rr.pos])
	rr.pos++
	var err error
	if r.TimestampDelta, err = rr.varint(); err != nil {
		return headers, err
	}
	delta, err := rr.varint()
	if err != nil {
		return headers, err
	}
	if int64(int32(delta)) != delta {
		return headers, fmt.Errorf("%w: offset delta %d", ErrMalformed, delta)
	}
	r.OffsetDelta = int32(delta)
	if r.Key, err = rr.bytes(end); err != nil {
		return headers, err
	}
	if r.Value, err = rr.bytes(end); err != nil {
		return headers, err
	}
	count, err := rr.varint()
	if err != nil {
		return headers, err
	}
	// A header takes at least two bytes: this bounds what count may grow
	// headers to by the record's size.
	if count < 0 || count > int64(end-rr.pos)/2 {
		return headers, fmt.Errorf("%w: header count %d", ErrMalformed, count)
	}
	headers = headers[:0]
	for range count {
		var h Header
		if h.Key, err = rr.bytes(end); err != nil {
			return headers, err
		}
		if h.Key == nil {
			return headers, fmt.Errorf("%w: null header key", ErrMalformed)
		}
		if h.Value, err = rr.bytes(end); err != nil {
			return headers, err
		}
		headers = append(headers, h)
	}
	if rr.pos != end {
		return headers, fmt.Errorf("%w: record has %d bytes left over", ErrMalformed, end-rr.pos)
	}
	r.Headers = headers
	return headers, nil
}

func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63) // zigzag, as binary.PutVarint
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// bytesLen is the encoded size of a nullable byte field.
func bytesLen(b []byte) int {
	if b == nil {
		return varintLen(-1)
	}
	return varintLen(int64(len(b))) + len(b)
}

func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	return append(binary.AppendVarint(dst, int64(len(b))), b...)
}

// appendRecord appends r in the v2 record encoding.
func appendRecord(dst []byte, r *Record) []byte {
	size := 1 + varintLen(r.TimestampDelta) + varintLen(int64(r.OffsetDelta)) +
		bytesLen(r.Key) + bytesLen(r.Value) + varintLen(int64(len(r.Headers)))
	for _, h := range r.Headers {
		size += bytesLen(h.Key) + bytesLen(h.Value)
	}
	dst = binary.AppendVarint(dst, int64(size))
	dst = append(dst, byte(r.Attributes))
	dst = binary.AppendVarint(dst, r.TimestampDelta)
	dst = binary.AppendVarint(dst, int64(r.OffsetDelta))
	dst = appendBytes(dst, r.Key)
	dst = appendBytes(dst, r.Value)
	dst = binary.AppendVarint(dst, int64(len(r.Headers)))
	for _, h := range r.Headers {
		dst = appendBytes(dst, h.Key)
		dst = appendBytes(dst, h.Value)
	}
	return dst
}
