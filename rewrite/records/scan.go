package records

import "encoding/binary"

// RawRecord is one record of an uncompressed batch as it lies on the
// wire, read by AnyRecord without decoding the rest of it: its value (nil
// for null) and its headers, still encoded. Both alias the batch.
type RawRecord struct {
	Value   []byte
	headers []byte // the header count, then each header
}

// AnyRecord reports whether pred holds for some record of recs, the
// records area of an uncompressed v2 batch (the bytes after its header,
// as PassesUnread hands them over). It reads only the lengths a record
// is framed by: a few varints per record, each a load that depends on
// the one before. For small records that is slower than a byte search
// over the whole area, so where a name must appear for pred to hold,
// search for it first and walk only the areas that hold it (or, for an
// offloading filter's question, use AnyLargeValueOrHeader, which is
// faster). A records area it cannot read counts as a match: the caller
// then decodes it, which reports what is wrong.
func AnyRecord(recs []byte, pred func(RawRecord) bool) bool {
	for at := 0; at < len(recs); {
		length, n := readVarint(recs[at:])
		if n <= 0 || length < minRecordBytes-1 || length > int64(len(recs)-at-n) {
			return true
		}
		body := recs[at+n : at+n+int(length)]
		at += n + int(length)
		r, ok := rawRecord(body)
		if !ok || pred(r) {
			return true
		}
	}
	return false
}

// rawRecord frames body, one record after its length: attributes, the
// timestamp and offset deltas, the key, the value, the headers.
func rawRecord(body []byte) (RawRecord, bool) {
	at := 1 // attributes
	for range 2 {
		_, n := readVarint(body[min(at, len(body)):])
		if n <= 0 {
			return RawRecord{}, false
		}
		at += n
	}
	_, at, ok := rawBytes(body, at) // the key
	if !ok {
		return RawRecord{}, false
	}
	value, at, ok := rawBytes(body, at)
	if !ok {
		return RawRecord{}, false
	}
	return RawRecord{Value: value, headers: body[at:]}, true
}

// HasHeader reports whether r carries a header named key. Headers it
// cannot read count as holding it, as in AnyRecord.
func (r RawRecord) HasHeader(key []byte) bool {
	count, at := readVarint(r.headers)
	if at <= 0 || count < 0 {
		return true
	}
	for range count {
		name, next, ok := rawBytes(r.headers, at)
		if !ok {
			return true
		}
		if string(name) == string(key) {
			return true
		}
		if _, at, ok = rawBytes(r.headers, next); !ok {
			return true
		}
	}
	return false
}

// rawBytes reads the varint-length-prefixed bytes at b[at:] (a length of
// -1 is null: nil) and returns them and where they end.
func rawBytes(b []byte, at int) ([]byte, int, bool) {
	if at > len(b) {
		return nil, 0, false
	}
	length, n := readVarint(b[at:])
	if n <= 0 || length < -1 || length > int64(len(b)-at-n) {
		return nil, 0, false
	}
	at += n
	if length < 0 {
		return nil, at, true
	}
	return b[at : at+int(length)], at + int(length), true
}

// readVarint is binary.Varint with its one- and two-byte cases inline:
// most of the lengths a record is framed by are under 8 KiB.
func readVarint(b []byte) (int64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return int64(b[0]>>1) ^ -int64(b[0]&1), 1
	}
	if len(b) > 1 && b[1] < 0x80 {
		u := uint64(b[0]&0x7f) | uint64(b[1])<<7
		return int64(u>>1) ^ -int64(u&1), 2
	}
	return binary.Varint(b)
}
