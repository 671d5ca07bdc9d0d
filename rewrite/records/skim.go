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
		length, p := varintAt(recs, at)
		if p < 0 || length < minRecordBytes-1 || length > int64(len(recs)-p) {
			return true
		}
		body := recs[p : p+int(length)]
		at = p + int(length)
		if p = skipVarint(body, 1); p < 0 { // after the attributes, the timestamp delta
			return true
		}
		if p = skipVarint(body, p); p < 0 { // the offset delta
			return true
		}
		size, p := varintAt(body, p) // the key's length
		if p < 0 || size < -1 || size > int64(len(body)-p) {
			return true
		}
		size, p = varintAt(body, p+int(max(size, 0))) // the value's length
		if p < 0 || size < -1 || size > int64(len(body)-p) || max(size, 0) > maxValue {
			return true
		}
		p += int(max(size, 0))
		if p >= len(body) {
			return true // no header count
		}
		if body[p] != 0 && (RawRecord{headers: body[p:]}).HasHeader(key) {
			return true
		}
	}
	return false
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

// FirstRecordLength is the encoded length of the first record of recs,
// a records area, or 0 when it cannot be read.
func FirstRecordLength(recs []byte) int64 {
	length, n := readVarint(recs)
	if n <= 0 {
		return 0
	}
	return length
}
