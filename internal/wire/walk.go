package wire

import (
	"encoding/binary"
	"fmt"
)

// Stepper is a cursor over an encoded message that a walk moves forward
// field by field. An in-memory Stepper only skips; the proxy's streaming
// Stepper relays each field to the client as it passes, so the walk can
// find the end of a response without holding it.
type Stepper interface {
	// Remaining is how many bytes of the message are left.
	Remaining() int
	// Skip passes n bytes of fixed-size fields.
	Skip(n int) error
	// SkipLarge passes n bytes of a variable-size value, such as record
	// batches, that may be large.
	SkipLarge(n int) error
	// Uvarint reads and passes an unsigned varint.
	Uvarint() (uint64, error)
	// ErrorCode passes a two-byte error code (a response's or one of its
	// partitions'), handing a non-zero one to the Stepper's ErrorNoter.
	ErrorCode() error
}

// ErrorNoter takes the non-zero error codes a walk passes, so that
// kproxy_response_errors_total counts the per-partition errors of
// responses relayed without being decoded.
type ErrorNoter interface {
	NoteError(code int16)
}

// WalkFetchResponseToTags moves s, positioned at the start of a flexible
// (v12+) Fetch response body, to the start of its top-level tagged fields,
// where KIP-951 puts the leader endpoints. Record batches are passed with
// SkipLarge and never parsed.
func WalkFetchResponseToTags(version int16, s Stepper) error {
	if !IsFlexible(FetchKey, version) {
		return fmt.Errorf("fetch v%d is not flexible: %w", version, ErrUnsupportedVersion)
	}
	w := stepWalker{s: s}
	w.skip(4) // throttle_time_ms
	w.errorCode()
	w.skip(4) // session_id
	w.topicPartitions(version >= 13, func() {
		w.skip(4) // index
		w.errorCode()
		w.skip(8 + 8 + 8) // high watermark, last stable, log start
		aborted := w.arrayLen()
		for a := 0; a < aborted && w.err == nil; a++ {
			w.skip(8 + 8) // producer_id, first_offset
			w.tags()
		}
		w.skip(4)     // preferred_read_replica
		w.bytes(true) // records
	})
	if w.err != nil {
		return fmt.Errorf("fetch v%d response: %w", version, w.err)
	}
	return nil
}

// WalkProduceResponseToTags is WalkFetchResponseToTags for flexible (v9+)
// Produce responses.
func WalkProduceResponseToTags(version int16, s Stepper) error {
	if !IsFlexible(ProduceKey, version) {
		return fmt.Errorf("produce v%d is not flexible: %w", version, ErrUnsupportedVersion)
	}
	w := stepWalker{s: s}
	w.topicPartitions(version >= 13, func() {
		w.skip(4) // index
		w.errorCode()
		w.skip(8 + 8 + 8) // base offset, log append time, log start offset
		recordErrors := w.arrayLen()
		for e := 0; e < recordErrors && w.err == nil; e++ {
			w.skip(4)      // batch_index
			w.bytes(false) // batch_index_error_message
			w.tags()
		}
		w.bytes(false) // error_message
	})
	w.skip(4) // throttle_time_ms
	if w.err != nil {
		return fmt.Errorf("produce v%d response: %w", version, w.err)
	}
	return nil
}

// WalkTags moves s over one tagged-field section.
func WalkTags(s Stepper) error {
	w := stepWalker{s: s}
	w.tags()
	return w.err
}

// AppendFillerTags appends a tagged-field section of exactly n bytes (n >=
// 3) that carries no field any Kafka version defines: one tag with an
// unassigned number and n-3 or fewer zero bytes. The proxy uses it in place
// of a top-level tag section it must not forward, when the frame's size was
// already sent and may not change. Readers keep unknown tags aside.
func AppendFillerTags(dst []byte, n int) ([]byte, error) {
	if n < 3 {
		return dst, fmt.Errorf("filler tag section of %d bytes: at least 3 needed", n)
	}
	// n = 1 (count) + len(tag varint) + len(size varint) + size. Some n
	// cannot be met with a one-byte tag (131: a 128-byte value needs a
	// two-byte size), so a two-byte tag number is tried too.
	for _, tag := range []uint64{0x7f, 0x3fff} { // unassigned tag numbers
		tagLen := len(binary.AppendUvarint(nil, tag))
		for sizeLen := 1; sizeLen <= binary.MaxVarintLen32; sizeLen++ {
			size := n - 1 - tagLen - sizeLen
			if size >= 0 && len(binary.AppendUvarint(nil, uint64(size))) == sizeLen {
				dst = append(dst, 1)
				dst = binary.AppendUvarint(dst, tag)
				dst = binary.AppendUvarint(dst, uint64(size))
				return append(dst, make([]byte, size)...), nil
			}
		}
	}
	return dst, fmt.Errorf("no filler tag section of exactly %d bytes", n)
}

// stepWalker drives a Stepper through flexible-encoding fields,
// remembering the first error.
type stepWalker struct {
	s   Stepper
	err error
}

// topicPartitions walks the topics array of a flexible Fetch or Produce
// response: each topic's id (byID: v13 and later) or name, its partitions,
// each walked by partition up to its tagged fields, and the tags.
func (w *stepWalker) topicPartitions(byID bool, partition func()) {
	topics := w.arrayLen()
	for t := 0; t < topics && w.err == nil; t++ {
		if byID {
			w.skip(16) // topic_id
		} else {
			w.bytes(false) // topic name
		}
		partitions := w.arrayLen()
		for p := 0; p < partitions && w.err == nil; p++ {
			partition()
			w.tags()
		}
		w.tags()
	}
}

func (w *stepWalker) skip(n int) {
	if w.err == nil {
		w.err = w.s.Skip(n)
	}
}

func (w *stepWalker) errorCode() {
	if w.err == nil {
		w.err = w.s.ErrorCode()
	}
}

func (w *stepWalker) uvarint() uint64 {
	if w.err != nil {
		return 0
	}
	v, err := w.s.Uvarint()
	w.err = err
	return v
}

// arrayLen reads a compact (nullable) array length; null is 0. A length the
// remaining bytes cannot hold is an error, so a hostile count cannot make
// the walk spin.
func (w *stepWalker) arrayLen() int {
	n := w.uvarint()
	if n == 0 || w.err != nil {
		return 0
	}
	if n-1 > uint64(w.s.Remaining()) {
		w.err = fmt.Errorf("array of %d: %w", n-1, ErrShortBuffer)
		return 0
	}
	return int(n - 1)
}

// bytes passes a compact (nullable) string or bytes field.
func (w *stepWalker) bytes(large bool) {
	n := w.uvarint()
	if n == 0 || w.err != nil {
		return
	}
	w.value(n-1, large)
}

// value passes n bytes of a field whose length was just read.
func (w *stepWalker) value(n uint64, large bool) {
	if n > uint64(w.s.Remaining()) {
		w.err = fmt.Errorf("value of %d bytes: %w", n, ErrShortBuffer)
		return
	}
	if large {
		w.err = w.s.SkipLarge(int(n))
	} else {
		w.err = w.s.Skip(int(n))
	}
}

// tags passes a tagged-field section.
func (w *stepWalker) tags() {
	count := w.uvarint()
	if count > uint64(w.s.Remaining()) {
		w.err = fmt.Errorf("%d tags: %w", count, ErrShortBuffer)
		return
	}
	for i := uint64(0); i < count && w.err == nil; i++ {
		w.uvarint() // tag
		if size := w.uvarint(); w.err == nil {
			w.value(size, false)
		}
	}
}

// sliceStepper is a Stepper over bytes in memory; errs, when set, takes
// the error codes passed.
type sliceStepper struct {
	b    []byte
	errs ErrorNoter
}

func (s *sliceStepper) ErrorCode() error {
	if len(s.b) < 2 {
		return ErrShortBuffer
	}
	if code := int16(binary.BigEndian.Uint16(s.b)); code != 0 && s.errs != nil {
		s.errs.NoteError(code)
	}
	s.b = s.b[2:]
	return nil
}

func (s *sliceStepper) Remaining() int        { return len(s.b) }
func (s *sliceStepper) SkipLarge(n int) error { return s.Skip(n) }

func (s *sliceStepper) Skip(n int) error {
	if n < 0 || n > len(s.b) {
		return ErrShortBuffer
	}
	s.b = s.b[n:]
	return nil
}

func (s *sliceStepper) Uvarint() (uint64, error) {
	v, n := binary.Uvarint(s.b)
	if n <= 0 {
		return 0, fmt.Errorf("varint: %w", ErrMalformed)
	}
	s.b = s.b[n:]
	return v, nil
}
