package protocol

import (
	"encoding/binary"
	"fmt"
)

// FetchResponseHasTopLevelTags reports whether a flexible (v12+) Fetch
// response body carries any top-level tagged field. KIP-951 puts the leader
// endpoints (tag 0) there, and only when some partition's leader moved, so
// a response without top-level tags has no broker address in it and can be
// relayed untouched. The walk skips record batches by length and allocates
// nothing.
func FetchResponseHasTopLevelTags(version int16, body []byte) (bool, error) {
	if !IsFlexible(FetchKey, version) {
		return false, nil
	}
	w := walker{b: body}
	w.skip(4 + 2 + 4) // throttle_time_ms, error_code, session_id (v7+)
	topics := w.compactArrayLen()
	for t := 0; t < topics && w.err == nil; t++ {
		if version >= 13 {
			w.skip(16) // topic_id
		} else {
			w.compactBytes() // topic name
		}
		partitions := w.compactArrayLen()
		for p := 0; p < partitions && w.err == nil; p++ {
			w.skip(4 + 2 + 8 + 8 + 8) // index, error, high watermark, last stable, log start
			aborted := w.compactArrayLen()
			for a := 0; a < aborted && w.err == nil; a++ {
				w.skip(8 + 8) // producer_id, first_offset
				w.tags()
			}
			w.skip(4)        // preferred_read_replica (v11+)
			w.compactBytes() // records
			w.tags()
		}
		w.tags()
	}
	return w.endsWithTags(fmt.Sprintf("fetch v%d response", version))
}

// ProduceResponseHasTopLevelTags is FetchResponseHasTopLevelTags for
// flexible (v9+) Produce responses, whose leader endpoints (KIP-951, tag 0)
// also appear only when a leader moved.
func ProduceResponseHasTopLevelTags(version int16, body []byte) (bool, error) {
	if !IsFlexible(ProduceKey, version) {
		return false, nil
	}
	w := walker{b: body}
	topics := w.compactArrayLen()
	for t := 0; t < topics && w.err == nil; t++ {
		if version >= 13 {
			w.skip(16) // topic_id
		} else {
			w.compactBytes() // topic name
		}
		partitions := w.compactArrayLen()
		for p := 0; p < partitions && w.err == nil; p++ {
			w.skip(4 + 2 + 8 + 8 + 8) // index, error, base offset, log append time, log start offset
			recordErrors := w.compactArrayLen()
			for e := 0; e < recordErrors && w.err == nil; e++ {
				w.skip(4)        // batch_index
				w.compactBytes() // batch_index_error_message
				w.tags()
			}
			w.compactBytes() // error_message
			w.tags()
		}
		w.tags()
	}
	w.skip(4) // throttle_time_ms
	return w.endsWithTags(fmt.Sprintf("produce v%d response", version))
}

// walker steps over flexible-encoding fields, remembering the first error.
type walker struct {
	b   []byte
	err error
}

func (w *walker) skip(n int) {
	if w.err != nil {
		return
	}
	if n < 0 || n > len(w.b) {
		w.err = ErrShortBuffer
		return
	}
	w.b = w.b[n:]
}

func (w *walker) uvarint() uint64 {
	if w.err != nil {
		return 0
	}
	v, n := binary.Uvarint(w.b)
	if n <= 0 {
		w.err = fmt.Errorf("varint: %w", ErrMalformed)
		return 0
	}
	w.b = w.b[n:]
	return v
}

// compactArrayLen reads a compact (nullable) array length; null is 0. A
// length that the remaining bytes cannot hold is an error, so a hostile
// count cannot make the walk spin.
func (w *walker) compactArrayLen() int {
	n := w.uvarint()
	if n == 0 {
		return 0
	}
	if n-1 > uint64(len(w.b)) {
		w.err = fmt.Errorf("array of %d: %w", n-1, ErrShortBuffer)
		return 0
	}
	return int(n - 1)
}

// compactBytes skips a compact (nullable) string or bytes field.
func (w *walker) compactBytes() {
	n := w.uvarint()
	if n > 0 {
		if n-1 > uint64(len(w.b)) {
			w.err = fmt.Errorf("bytes of %d: %w", n-1, ErrShortBuffer)
			return
		}
		w.skip(int(n - 1))
	}
}

// endsWithTags reads the final, top-level tagged-field section, requires
// it to end the body, and reports whether it holds any field.
func (w *walker) endsWithTags(what string) (bool, error) {
	rest := w.b
	w.tags()
	if w.err == nil && len(w.b) != 0 {
		w.err = fmt.Errorf("%d bytes after the response: %w", len(w.b), ErrMalformed)
	}
	if w.err != nil {
		return false, fmt.Errorf("%s: %w", what, w.err)
	}
	return rest[0] != 0, nil // the tag count, a uvarint: zero only as one 0 byte
}

// tags skips a tagged-field section.
func (w *walker) tags() {
	count := w.uvarint()
	if count > uint64(len(w.b)) {
		w.err = fmt.Errorf("%d tags: %w", count, ErrShortBuffer)
		return
	}
	for i := uint64(0); i < count && w.err == nil; i++ {
		w.uvarint() // tag
		w.compactBytesRaw()
	}
}

// compactBytesRaw skips a uvarint length and that many bytes (tag values
// are not +1 encoded).
func (w *walker) compactBytesRaw() {
	n := w.uvarint()
	if n > uint64(len(w.b)) {
		w.err = fmt.Errorf("tag of %d bytes: %w", n, ErrShortBuffer)
		return
	}
	w.skip(int(n))
}
