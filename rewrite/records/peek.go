package records

import (
	"bytes"
	"encoding/binary"
	"math"
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
	return passesUnread(src, idle, true)
}

// ProducedPassesUnread is PassesUnread for a produced partition, which
// never ends with a partial batch: one makes it false, and the caller's
// Rewrite then finds the request malformed (Summary.Incomplete) rather
// than forwarding bytes nobody read.
func ProducedPassesUnread(src []byte, idle func(records []byte) bool) bool {
	return passesUnread(src, idle, false)
}

// passesUnread is PassesUnread, whose answer for a truncated last batch
// is truncatedPasses.
func passesUnread(src []byte, idle func(records []byte) bool, truncatedPasses bool) bool {
	for at := 0; at < len(src); {
		rest := src[at:]
		if len(rest) <= magicAt {
			return truncatedPasses
		}
		size := logOverhead + int64(int32(binary.BigEndian.Uint32(rest[lengthAt:])))
		switch {
		case size <= magicAt:
			return false // malformed: the Rewrite reports it
		case size > int64(len(rest)):
			return truncatedPasses
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

// MayHoldHeader reports whether some record of src may carry a header
// named key: true for a compressed batch (which may hold one) or one
// AnyRecord cannot read, else whether a record of an uncompressed batch
// does. A batch of small records without key's bytes anywhere holds no
// such header; one with them (in a value, say), or of larger records
// (SkimBeatsSearch), has its records' headers read, so a filter that
// marks the records it must see (record encryption's marker header)
// decodes only the responses that hold some.
func MayHoldHeader(src, key []byte) bool {
	return !PassesUnread(src, func(recs []byte) bool {
		if !SkimBeatsSearch(recs) && !bytes.Contains(recs, key) {
			return true
		}
		return !AnyLargeValueOrHeader(recs, math.MaxInt64, key)
	})
}
