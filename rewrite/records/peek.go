package records

import (
	"bytes"
	"encoding/binary"
)

// PassesUnread reports, without decoding a record, whether a Rewrite of
// src would leave it as it is given that fn changes no record of a batch
// whose records area (the bytes after the batch header, as on the wire)
// idle accepts: true when every whole batch of src is a legacy message set
// (which Rewrite passes) or an uncompressed v2 batch idle accepts. A
// compressed batch, a malformed one, or one idle refuses makes it false,
// and the caller rewrites. A truncated last batch (a fetch cut at its size
// limit) is passed by Rewrite as it is, so it counts for nothing.
//
// It lets a filter skip the CRC check and the record decoding of the
// partitions it has nothing to do in, such as those without its marker.
func PassesUnread(src []byte, idle func(records []byte) bool) bool {
	for at := 0; at < len(src); {
		rest := src[at:]
		if len(rest) <= magicAt {
			return true // truncated
		}
		size := logOverhead + int64(int32(binary.BigEndian.Uint32(rest[lengthAt:])))
		switch {
		case size <= magicAt:
			return false // malformed: the Rewrite reports it
		case size > int64(len(rest)):
			return true // truncated
		}
		raw := rest[:size]
		at += int(size)
		switch magic := raw[magicAt]; {
		case magic == 0 || magic == 1:
			continue
		case magic != 2 || size < headerSize:
			return false
		}
		attributes := int16(binary.BigEndian.Uint16(raw[attributesAt:]))
		if attributes&codecMask != 0 || !idle(raw[headerSize:]) {
			return false
		}
	}
	return true
}

// MayHoldMark reports whether RewriteMarked(dst, src, mark, fn) could hand
// fn a record: false when PassesUnread finds no batch whose records area
// holds mark's bytes. A compressed batch may hold it.
func MayHoldMark(src, mark []byte) bool {
	return !PassesUnread(src, func(records []byte) bool { return !bytes.Contains(records, mark) })
}
