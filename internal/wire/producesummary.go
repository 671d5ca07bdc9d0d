package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"
)

// ProduceSummary is what a Produce request body says about who writes
// where: its transactional id, acks, and each topic's name (or id) and
// partitions with their record bytes, read without building kmsg structs.
//
// Parse accepts exactly the bodies kmsg's ProduceRequest decoder accepts
// (FuzzProduceSummary holds it to that), so a filter that decides from a
// summary and forwards the original bytes forwards nothing the decoder
// would have refused.
//
// A summary keeps offsets into the body, not copies: the strings and slices
// its accessors return alias the body, which must not change while they are
// in use. Its own memory is 16 bytes per topic and 12 per partition,
// allocated only as elements are read and reused by the next Parse, and
// bounded: a request with more than MaxSummaryTopics topics or
// MaxSummaryPartitions partitions is not summarized (ErrSummaryTooLarge),
// so a summary never holds more than 112 KiB whatever the frame claims.
type ProduceSummary struct {
	body    []byte
	version int16
	// TransactionalID is the transactional id; HasTransactionalID is false
	// when it is null (or the version has none).
	TransactionalID    string
	HasTransactionalID bool
	Acks               int16
	topics             []produceTopic
	partitions         []producePartition
}

type produceTopic struct {
	name       span  // the name (v0-12) or the 16-byte id (v13+)
	first, end int32 // its partitions: partitions[first:end]
}

type producePartition struct {
	partition int32
	records   span // length -1: null
}

type span struct{ off, len int32 }

// Parse reads body, a Produce request body (the bytes after the request
// header) at version, into s, replacing what s held. A body kmsg would not
// decode is an error wrapping ErrMalformed; one too large to summarize,
// ErrSummaryTooLarge.
func (s *ProduceSummary) Parse(version int16, body []byte) error {
	s.Reset()
	s.body, s.version = body, version
	r := summaryReader{src: body}
	flexible := IsFlexible(ProduceKey, version)
	if version >= 3 {
		if id, ok := r.nullableString(flexible); ok {
			s.TransactionalID, s.HasTransactionalID = unsafeString(body, id), true
		}
	}
	s.Acks = r.int16()
	r.int32() // timeout_ms
	topics := r.arrayLen(flexible)
	if r.bad || int64(topics)*2 > int64(r.left()) || version >= 13 && int64(topics)*18 > int64(r.left()) {
		return errProduceTopics
	}
	for t := int32(0); t < topics && !r.bad; t++ {
		var name span
		if version >= 13 {
			name = r.span(16)
		} else {
			name = r.string(flexible)
		}
		partitions := r.arrayLen(flexible)
		if r.bad || int64(partitions)*6 > int64(r.left()) {
			return errProducePartitions
		}
		if len(s.topics) == MaxSummaryTopics || int64(len(s.partitions))+int64(partitions) > MaxSummaryPartitions {
			return ErrSummaryTooLarge
		}
		first := int32(len(s.partitions))
		for p := int32(0); p < partitions && !r.bad; p++ {
			part := producePartition{partition: r.int32(), records: r.nullableBytes(flexible)}
			if flexible {
				r.tags()
			}
			s.partitions = appendBounded(s.partitions, part, MaxSummaryPartitions)
		}
		if flexible {
			r.tags()
		}
		s.topics = appendBounded(s.topics, produceTopic{name: name, first: first, end: int32(len(s.partitions))}, MaxSummaryTopics)
	}
	if flexible {
		r.tags()
	}
	if r.bad {
		return errProduceBody
	}
	return nil
}

// The most topics and partitions a summary holds.
const (
	MaxSummaryTopics     = 1 << 10
	MaxSummaryPartitions = 1 << 13
)

// ErrSummaryTooLarge: the request may be valid, but lists more topics or
// partitions than a summary holds; the caller must decode it instead.
var ErrSummaryTooLarge = errors.New("produce request too large to summarize")

// Parse's errors are built once: refusing a hostile body allocates nothing.
var (
	errProduceTopics     = fmt.Errorf("produce request: topic count beyond the body: %w", ErrMalformed)
	errProducePartitions = fmt.Errorf("produce request: partition count beyond the body: %w", ErrMalformed)
	errProduceBody       = fmt.Errorf("produce request: body ends early or a field is malformed: %w", ErrMalformed)
)

// Reset forgets the body, so a pooled summary pins no frame, and keeps the
// element slices' room (bounded by the Max constants) for reuse.
func (s *ProduceSummary) Reset() {
	*s = ProduceSummary{topics: s.topics[:0], partitions: s.partitions[:0]}
}

// Topics is how many topics the request lists.
func (s *ProduceSummary) Topics() int { return len(s.topics) }

// Topic returns topic i's name (v0-12; "" from v13) and id (v13+; zero
// before), and how many partitions it lists.
func (s *ProduceSummary) Topic(i int) (name string, id [16]byte, partitions int) {
	t := s.topics[i]
	if s.version >= 13 {
		copy(id[:], s.body[t.name.off:t.name.off+16])
	} else {
		name = unsafeString(s.body, t.name)
	}
	return name, id, int(t.end - t.first)
}

// Partition returns partition j of topic i: its index and its record
// bytes (nil when null).
func (s *ProduceSummary) Partition(i, j int) (partition int32, records []byte) {
	p := s.partitions[int(s.topics[i].first)+j]
	if p.records.len < 0 {
		return p.partition, nil
	}
	return p.partition, s.body[p.records.off : p.records.off+p.records.len : p.records.off+p.records.len]
}

// appendBounded appends v, growing s by doubling but never past max
// elements (Parse checks the bound before it appends).
func appendBounded[T any](s []T, v T, max int) []T {
	if len(s) == cap(s) {
		grown := make([]T, len(s), min(max, 2*cap(s)+8))
		copy(grown, s)
		s = grown
	}
	return append(s, v)
}

func unsafeString(body []byte, sp span) string {
	if sp.len <= 0 {
		return ""
	}
	return unsafe.String(&body[sp.off], int(sp.len))
}

// summaryReader reads Kafka primitives with the acceptance rules of kmsg's
// reader: the first short or malformed read makes it bad, and every later
// read returns zero values.
type summaryReader struct {
	src []byte
	off int
	bad bool
}

func (r *summaryReader) left() int { return len(r.src) - r.off }

func (r *summaryReader) fail() { r.bad, r.off = true, len(r.src) }

// take is the next n bytes; nil, and the reader failed, when fewer are left.
func (r *summaryReader) take(n int) []byte {
	if r.left() < n {
		r.fail()
		return nil
	}
	r.off += n
	return r.src[r.off-n : r.off]
}

func (r *summaryReader) int16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *summaryReader) int32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

// uvarint reads a 32-bit unsigned varint: at most five bytes, the fifth
// holding at most four bits.
func (r *summaryReader) uvarint() uint32 {
	if r.off < len(r.src) && r.src[r.off] < 0x80 { // nearly every length
		r.off++
		return uint32(r.src[r.off-1])
	}
	var x uint32
	for i := 0; i < 5; i++ {
		if r.off+i >= len(r.src) {
			break
		}
		c := r.src[r.off+i]
		if i == 4 {
			if c > 0x0f {
				break
			}
			x |= uint32(c) << 28
			r.off += 5
			return x
		}
		x |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			r.off += i + 1
			return x
		}
	}
	r.fail()
	return 0
}

// span passes l bytes and returns where they are; a negative or
// overrunning l makes the reader bad.
func (r *summaryReader) span(l int) span {
	if l < 0 || l > r.left() {
		r.fail()
		return span{}
	}
	sp := span{off: int32(r.off), len: int32(l)}
	r.off += l
	return sp
}

// length reads a string or bytes length: compact (length+1) when
// flexible, else int16 (strings) or int32 (bytes). -1 means null.
func (r *summaryReader) length(flexible, bytes bool) int {
	switch {
	case flexible:
		return int(r.uvarint()) - 1
	case bytes:
		return int(r.int32())
	}
	return int(r.int16())
}

func (r *summaryReader) string(flexible bool) span { return r.span(r.length(flexible, false)) }

func (r *summaryReader) nullableString(flexible bool) (span, bool) {
	l := r.length(flexible, false)
	if l < 0 {
		return span{}, false
	}
	sp := r.span(l)
	return sp, !r.bad
}

func (r *summaryReader) nullableBytes(flexible bool) span {
	l := r.length(flexible, true)
	if l < 0 {
		return span{len: -1}
	}
	return r.span(l)
}

// arrayLen reads an array length; kmsg refuses one larger than the bytes
// left and reads a negative one as empty.
func (r *summaryReader) arrayLen(flexible bool) int32 {
	var n int32
	if flexible {
		n = int32(r.uvarint()) - 1
	} else {
		n = r.int32()
	}
	if r.left() < int(n) {
		r.fail()
		return 0
	}
	return n
}

// tags passes a tagged-field section.
func (r *summaryReader) tags() {
	for n := r.uvarint(); n > 0 && !r.bad; n-- {
		r.uvarint() // tag
		r.span(int(r.uvarint()))
	}
}
