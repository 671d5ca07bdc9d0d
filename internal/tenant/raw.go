package tenant

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// errRawBody: a body the raw walk cannot read (truncated, a length past the
// end, a negative count): the frame is refused, as the decoder would.
var errRawBody = errors.New("malformed body")

// rawRewriter walks an encoded message body and builds a copy of it with
// some fields replaced, copying everything between them (record batches
// included) as it stands: names change without decoding the records. The
// first error stops it.
type rawRewriter struct {
	in       []byte
	pos      int // next byte of in to read
	copied   int // in[:copied] is already in out (or replaced)
	out      []byte
	flexible bool
	err      error
}

func (w *rawRewriter) fail() {
	if w.err == nil {
		w.err = errRawBody
	}
	w.pos = len(w.in)
}

func (w *rawRewriter) need(n int) bool {
	if w.err != nil || n < 0 || len(w.in)-w.pos < n {
		w.fail()
		return false
	}
	return true
}

func (w *rawRewriter) skip(n int) {
	if w.need(n) {
		w.pos += n
	}
}

func (w *rawRewriter) int16() int16 {
	if !w.need(2) {
		return 0
	}
	v := int16(binary.BigEndian.Uint16(w.in[w.pos:]))
	w.pos += 2
	return v
}

func (w *rawRewriter) int32() int32 {
	if !w.need(4) {
		return 0
	}
	v := int32(binary.BigEndian.Uint32(w.in[w.pos:]))
	w.pos += 4
	return v
}

func (w *rawRewriter) uvarint() uint64 {
	if w.err != nil {
		return 0
	}
	v, n := binary.Uvarint(w.in[w.pos:])
	if n <= 0 || v > 1<<31 {
		w.fail()
		return 0
	}
	w.pos += n
	return v
}

// length reads a string, bytes or array length: -1 for null.
func (w *rawRewriter) length(bytes, array bool) int {
	switch {
	case w.flexible:
		return int(w.uvarint()) - 1
	case bytes || array:
		return int(w.int32())
	default:
		return int(w.int16())
	}
}

// arrayLen reads an array's length; null counts as empty. A count that
// cannot fit in what is left is refused before anything is walked.
func (w *rawRewriter) arrayLen() int {
	n := w.length(false, true)
	if n < -1 || n > len(w.in)-w.pos {
		w.fail()
		return 0
	}
	return max(n, 0)
}

// skipBytes passes a nullable bytes field (records).
func (w *rawRewriter) skipBytes() {
	if n := w.length(true, false); n != -1 {
		w.skip(n)
	}
}

// tags passes a tagged-field section (flexible versions only).
func (w *rawRewriter) tags() {
	if !w.flexible {
		return
	}
	for n := w.uvarint(); n > 0 && w.err == nil; n-- {
		w.uvarint()
		w.skip(int(w.uvarint()))
	}
}

// mapString reads a string (nullable when nullable) and writes mapped's
// result in its place; a null string is kept null. mapped's error stops
// the walk.
func (w *rawRewriter) mapString(nullable bool, mapped func(string) (string, error)) {
	start := w.pos
	n := w.length(false, false)
	if n == -1 && nullable {
		return
	}
	if n < 0 || !w.need(n) {
		w.fail()
		return
	}
	s := string(w.in[w.pos : w.pos+n])
	w.pos += n
	out, err := mapped(s)
	if err != nil {
		w.err, w.pos = err, len(w.in)
		return
	}
	w.out = append(w.out, w.in[w.copied:start]...)
	if w.flexible {
		w.out = binary.AppendUvarint(w.out, uint64(len(out))+1)
	} else {
		w.out = binary.BigEndian.AppendUint16(w.out, uint16(len(out)))
	}
	w.out = append(w.out, out...)
	w.copied = w.pos
}

// mapUUID reads a 16-byte id and writes mapped's result in its place.
func (w *rawRewriter) mapUUID(mapped func([16]byte) [16]byte) {
	if !w.need(16) {
		return
	}
	id := [16]byte(w.in[w.pos : w.pos+16])
	if up := mapped(id); up != id {
		w.out = append(w.out, w.in[w.copied:w.pos]...)
		w.out = append(w.out, up[:]...)
		w.copied = w.pos + 16
	}
	w.pos += 16
}

// finish appends the rest of the body; the walk must have read it all.
// When nothing was replaced it returns nil: the body is forwarded as it
// is, with no copy.
func (w *rawRewriter) finish(what string) ([]byte, error) {
	if w.err == nil && w.pos != len(w.in) {
		w.err = fmt.Errorf("%d bytes after the end: %w", len(w.in)-w.pos, errRawBody)
	}
	if w.err != nil {
		return nil, fmt.Errorf("virtual cluster: %s: %w", what, w.err)
	}
	if w.copied == 0 {
		return nil, nil
	}
	return append(w.out, w.in[w.copied:]...), nil
}
