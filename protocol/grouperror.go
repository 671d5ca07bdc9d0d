package protocol

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// GroupResponseErrorCode returns the group error of a response from a group
// coordinator without decoding it: it reads resp (the bytes after the
// frame's size prefix, header included; a prefix of them is enough) only up
// to the error field. It returns false for any other API, for a version
// kmsg does not know, for a response with no group in it, and when resp
// ends, or is malformed, before the error field. Whenever kmsg decodes the
// body, the code is the one kmsg's decode holds.
//
// What "the group error" is depends on the API:
//
//   - JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetDelete,
//     ConsumerGroupHeartbeat, ShareGroupHeartbeat, StreamsGroupHeartbeat,
//     AlterShareGroupOffsets, DeleteShareGroupOffsets: the top-level
//     error code, the only one about the group.
//   - DescribeGroups, DeleteGroups, ConsumerGroupDescribe,
//     ShareGroupDescribe, StreamsGroupDescribe: the first group's error
//     code (a coordinator error applies to every group the request named
//     that this coordinator owns).
//   - OffsetFetch: from v8 the first group's error code, v2 to v7 the
//     top-level error code, before v2 the first partition's.
//   - OffsetCommit, TxnOffsetCommit: the first partition's error code,
//     as these responses carry no other; a coordinator error is repeated
//     for every partition.
//
// ListGroups (answered by every broker, not by a group's coordinator) and
// DescribeShareGroupOffsets are not group responses here.
func GroupResponseErrorCode(apiKey, apiVersion int16, resp []byte) (int16, bool) {
	t := APIs()
	if apiVersion < 0 || apiVersion > t.MaxVersion(apiKey) {
		return 0, false
	}
	body, err := t.SkipResponseHeader(apiKey, apiVersion, resp)
	if err != nil {
		return 0, false
	}
	r := groupReader{b: body, flexible: t.IsFlexible(apiKey, apiVersion)}
	code, ok := readGroupError(&r, kmsg.Key(apiKey), apiVersion)
	if !ok || r.bad {
		return 0, false
	}
	return code, true
}

// readGroupError reads the group error of key's response at version from
// the start of its body.
func readGroupError(r *groupReader, key kmsg.Key, v int16) (int16, bool) {
	switch key {
	case kmsg.JoinGroup:
		r.skipIf(v >= 2, 4) // throttle_time_ms
		return r.int16(), true
	case kmsg.SyncGroup, kmsg.Heartbeat, kmsg.LeaveGroup:
		r.skipIf(v >= 1, 4)
		return r.int16(), true
	case kmsg.OffsetDelete:
		return r.int16(), true // before throttle_time_ms
	case kmsg.ConsumerGroupHeartbeat, kmsg.ShareGroupHeartbeat, kmsg.StreamsGroupHeartbeat,
		kmsg.AlterShareGroupOffsets, kmsg.DeleteShareGroupOffsets:
		r.skip(4)
		return r.int16(), true
	case kmsg.DescribeGroups:
		r.skipIf(v >= 1, 4)
		return r.firstElement(func() int16 { return r.int16() })
	case kmsg.ConsumerGroupDescribe, kmsg.ShareGroupDescribe, kmsg.StreamsGroupDescribe:
		r.skip(4)
		return r.firstElement(func() int16 { return r.int16() })
	case kmsg.DeleteGroups:
		r.skip(4)
		return r.firstElement(func() int16 { r.string(); return r.int16() })
	case kmsg.OffsetCommit:
		r.skipIf(v >= 3, 4)
		return r.firstPartitionError(v >= 10)
	case kmsg.TxnOffsetCommit:
		r.skip(4)
		return r.firstPartitionError(v >= 6)
	case kmsg.OffsetFetch:
		return readOffsetFetchError(r, v)
	}
	return 0, false
}

// readOffsetFetchError reads an OffsetFetch response's group error (see
// GroupResponseErrorCode): before v8 the group's topics come first, so they
// are passed field by field.
func readOffsetFetchError(r *groupReader, v int16) (int16, bool) {
	r.skipIf(v >= 3, 4)
	partition := func() {
		r.skip(4 + 8)       // partition, committed offset
		r.skipIf(v >= 5, 4) // committed leader epoch
		r.string()          // metadata (nullable: read alike)
		r.skip(2)           // error code
		r.tags()            // partition's tags
	}
	topics := func(ids bool) {
		for range r.arrayLen() {
			if ids {
				r.skip(16)
			} else {
				r.string()
			}
			for range r.arrayLen() {
				partition()
			}
			r.tags()
		}
	}
	switch {
	case v < 2: // the first topic's first partition
		if r.arrayLen() == 0 {
			return 0, false
		}
		r.string()
		return r.firstElement(func() int16 {
			r.skip(4 + 8)
			r.string()
			return r.int16()
		})
	case v < 8:
		topics(false)
		return r.int16(), true
	}
	return r.firstElement(func() int16 {
		r.string() // group id
		topics(v >= 10)
		return r.int16()
	})
}

// groupReader reads fields from the start of a response body the way kmsg
// does (so that both agree on every body kmsg accepts), remembering
// whether it ran out of bytes or met a length kmsg refuses.
type groupReader struct {
	b        []byte
	flexible bool
	bad      bool
}

// take is the next n bytes; nil, and the reader bad, when fewer are left.
func (r *groupReader) take(n int) []byte {
	if r.bad || n < 0 || n > len(r.b) {
		r.bad, r.b = true, nil
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

func (r *groupReader) skip(n int) { r.take(n) }

func (r *groupReader) skipIf(cond bool, n int) {
	if cond {
		r.skip(n)
	}
}

func (r *groupReader) int16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *groupReader) int32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

// uvarint is kmsg's 32-bit unsigned varint: at most 5 bytes, the high bits
// of a fifth byte dropped.
func (r *groupReader) uvarint() uint32 {
	var v uint32
	for i := 0; i < 5; i++ {
		if r.bad || i >= len(r.b) {
			r.bad, r.b = true, nil
			return 0
		}
		c := r.b[i]
		v |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			r.b = r.b[i+1:]
			return v
		}
	}
	r.bad, r.b = true, nil
	return 0
}

// string passes a string, nullable or not: a negative length is null (for
// a non-nullable string kmsg refuses it, and so does the field's next read
// in practice; treating both alike is safe because the caller reports no
// code unless every read succeeded).
func (r *groupReader) string() {
	var n int
	if r.flexible {
		n = int(r.uvarint()) - 1
	} else {
		n = int(r.int16())
	}
	if n > 0 {
		r.skip(n)
	}
}

// arrayLen is an array's element count as kmsg reads it: a negative count
// (null) is empty, and a count larger than the bytes left is refused.
func (r *groupReader) arrayLen() int {
	var n int32
	if r.flexible {
		n = int32(r.uvarint()) - 1
	} else {
		n = r.int32()
	}
	if r.bad || n <= 0 {
		return 0
	}
	if int(n) > len(r.b) {
		r.bad, r.b = true, nil
		return 0
	}
	return int(n)
}

// tags passes a flexible struct's tag section; nothing for other versions.
func (r *groupReader) tags() {
	if !r.flexible {
		return
	}
	for n := r.uvarint(); n > 0 && !r.bad; n-- {
		r.uvarint()
		r.skip(int(r.uvarint()))
	}
}

// firstElement reads an array's length and, if it has an element, the code
// read returns from its start.
func (r *groupReader) firstElement(read func() int16) (int16, bool) {
	if r.arrayLen() == 0 {
		return 0, false
	}
	return read(), true
}

// firstPartitionError reads the first partition's error code of the
// topics array of an OffsetCommit-like response: topic (name, or id when
// ids), then partitions of partition index and error code.
func (r *groupReader) firstPartitionError(ids bool) (int16, bool) {
	if r.arrayLen() == 0 {
		return 0, false
	}
	if ids {
		r.skip(16)
	} else {
		r.string()
	}
	return r.firstElement(func() int16 { r.skip(4); return r.int16() })
}
