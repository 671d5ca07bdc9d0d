package wire

import (
	"encoding/binary"
	"fmt"
)

// ProduceThrottleOffset returns where throttle_time_ms starts in a Produce
// response body (the bytes after the response header) of version: after
// the topics array, so the array is walked, its records never parsed.
// kproxy sets the field in place there rather than decode the response.
// Version 0 has no such field.
func ProduceThrottleOffset(version int16, body []byte) (int, error) {
	if version < 1 {
		return 0, fmt.Errorf("produce v0 has no throttle_time_ms: %w", ErrUnsupportedVersion)
	}
	if IsFlexible(ProduceKey, version) {
		s := &sliceStepper{b: body}
		if err := WalkProduceResponseToTags(version, s); err != nil {
			return 0, err
		}
		return len(body) - s.Remaining() - 4, nil // the walk ends after the field
	}
	r := fixedReader{b: body}
	partitionFixed := 4 + 2 + 8 // index, error code, base offset
	if version >= 2 {
		partitionFixed += 8 // log append time
	}
	if version >= 5 {
		partitionFixed += 8 // log start offset
	}
	topics := r.arrayLen()
	for t := 0; t < topics && r.err == nil; t++ {
		r.str() // topic name
		partitions := r.arrayLen()
		for p := 0; p < partitions && r.err == nil; p++ {
			r.skip(partitionFixed)
			if version >= 8 {
				recordErrors := r.arrayLen()
				for e := 0; e < recordErrors && r.err == nil; e++ {
					r.skip(4) // batch_index
					r.str()   // batch_index_error_message
				}
				r.str() // error_message
			}
		}
	}
	if r.err == nil && len(r.b)-r.off < 4 {
		r.err = fmt.Errorf("no room for throttle_time_ms: %w", ErrShortBuffer)
	}
	if r.err != nil {
		return 0, fmt.Errorf("produce v%d response: %w", version, r.err)
	}
	return r.off, nil
}

// fixedReader walks non-flexible fields (int32 array lengths, int16
// string lengths), remembering the first error.
type fixedReader struct {
	b   []byte
	off int
	err error
}

func (r *fixedReader) skip(n int) {
	if r.err == nil && n > len(r.b)-r.off {
		r.err = ErrShortBuffer
	}
	if r.err == nil {
		r.off += n
	}
}

// arrayLen reads an int32 array length; null (-1) is 0. A length the
// remaining bytes cannot hold is an error, so a hostile count cannot make
// the walk spin.
func (r *fixedReader) arrayLen() int {
	start := r.off
	r.skip(4)
	if r.err != nil {
		return 0
	}
	n := int32(binary.BigEndian.Uint32(r.b[start:]))
	if n < 0 {
		return 0
	}
	if int(n) > len(r.b)-r.off {
		r.err = fmt.Errorf("array of %d: %w", n, ErrShortBuffer)
		return 0
	}
	return int(n)
}

// str passes an int16-length (nullable) string.
func (r *fixedReader) str() {
	start := r.off
	r.skip(2)
	if r.err != nil {
		return
	}
	if n := int16(binary.BigEndian.Uint16(r.b[start:])); n > 0 {
		r.skip(int(n))
	}
}
