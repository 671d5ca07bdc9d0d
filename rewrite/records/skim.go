package records

import "encoding/binary"

// AnyLargeValueOrHeader is AnyRecord(recs, pred) for the predicate "the
// value is longer than maxValue bytes or a header is named key", the
// question an offloading filter asks of each batch it might leave alone,
// read in one loop without a call per record. It reads a few bytes per
// record where a byte search for key reads them all: in a benchmark of
// 1 KiB records, about 10 ns a record, 100 GB/s in the processor's caches
// and 37 GB/s from memory, against 17 GB/s for the search. A records area
// it cannot read counts as a match, as in AnyRecord.
func AnyLargeValueOrHeader(recs []byte, maxValue int64, key []byte) bool {
	for at := 0; at < len(recs); {
		body, valueAt, size, next := frameAt(recs, at)
		if next < 0 || max(size, 0) > maxValue {
			return true
		}
		at = next
		p := valueAt + int(max(size, 0))
		if p >= len(body) {
			return true // no header count
		}
		if body[p] != 0 && (RawRecord{headers: body[p:]}).HasHeader(key) {
			return true
		}
	}
	return false
}

// AnyValue is AnyRecord(recs, pred) for a predicate of the value alone
// (nil for null), in AnyLargeValueOrHeader's loop: where pred mostly
// answers from a value's first bytes, it reads a few bytes per record.
func AnyValue(recs []byte, pred func(value []byte) bool) bool {
	for at := 0; at < len(recs); {
		body, valueAt, size, next := frameAt(recs, at)
		if next < 0 {
			return true
		}
		at = next
		var value []byte
		if size >= 0 {
			value = body[valueAt : valueAt+int(size)]
		}
		if pred(value) {
			return true
		}
	}
	return false
}

// frameAt frames the record at recs[at:] as rawRecord does: its body
// (after its length), where its value starts in body and the value's
// length (-1 for null), and where the next record starts, -1 when the
// record cannot be read.
func frameAt(recs []byte, at int) (body []byte, valueAt int, size int64, next int) {
	length, p := varintAt(recs, at)
	if p < 0 || length < minRecordBytes-1 || length > int64(len(recs)-p) {
		return nil, 0, 0, -1
	}
	body = recs[p : p+int(length)]
	next = p + int(length)
	if p = skipVarint(body, 1); p < 0 { // after the attributes, the timestamp delta
		return nil, 0, 0, -1
	}
	if p = skipVarint(body, p); p < 0 { // the offset delta
		return nil, 0, 0, -1
	}
	size, p = varintAt(body, p) // the key's length
	if p < 0 || size < -1 || size > int64(len(body)-p) {
		return nil, 0, 0, -1
	}
	size, p = varintAt(body, p+int(max(size, 0))) // the value's length
	if p < 0 || size < -1 || size > int64(len(body)-p) {
		return nil, 0, 0, -1
	}
	return body, p, size, next
}

// varintAt reads the varint at b[at:] and returns it and where it ends,
// or -1 as that position when b ends first or it is malformed. Its one-
// and two-byte cases (lengths under 8 KiB) are inline.
func varintAt(b []byte, at int) (int64, int) {
	if at >= 0 && at+1 < len(b) {
		u := uint64(b[at])
		if u < 0x80 {
			return int64(u>>1) ^ -int64(u&1), at + 1
		}
		if c := b[at+1]; c < 0x80 {
			u = u&0x7f | uint64(c)<<7
			return int64(u>>1) ^ -int64(u&1), at + 2
		}
	}
	return longVarintAt(b, at)
}

// longVarintAt is varintAt beyond its inline cases.
func longVarintAt(b []byte, at int) (int64, int) {
	if at < 0 || at >= len(b) {
		return 0, -1
	}
	v, n := readVarint(b[at:])
	if n <= 0 {
		return 0, -1
	}
	return v, at + n
}

// skipVarint returns where the varint at b[at:] ends, or -1 where
// binary.Varint would not read it (b ends first, or it overflows 64 bits).
func skipVarint(b []byte, at int) int {
	for i := range binary.MaxVarintLen64 {
		if at+i >= len(b) {
			return -1
		}
		if c := b[at+i]; c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				return -1
			}
			return at + i + 1
		}
	}
	return -1
}

// skimFrom is the record length from which reading a records area's
// framing costs less than a byte search over it: the framing loop takes
// about 10 ns a record, a byte search about 60 ps a byte.
const skimFrom = 160

// SkimBeatsSearch reports whether recs, a records area, is read faster
// by its framing (AnyLargeValueOrHeader, AnyValue) than by a byte search
// for a name its records must hold to matter, judging by the length of
// its first record.
func SkimBeatsSearch(recs []byte) bool {
	length, n := readVarint(recs)
	return n > 0 && length >= skimFrom
}
