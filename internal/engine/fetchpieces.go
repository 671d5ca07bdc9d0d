package engine

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// A Fetch response's records that a filter rewrote into buffers of its
// own (encryption opens them) are about a megabyte a partition; encoding
// the response would copy them once more, and that copy was 7% of kproxy's
// CPU consuming an encrypted topic. They are written from where they are
// instead, as a filtered Produce request's records are (appendProduceFrame):
// the response is encoded with a placeholder in their place, which is then
// cut out and its length prefix rewritten.

// recordsPlaceholderLen is the length of the random placeholder a spliced
// records field is encoded as.
const recordsPlaceholderLen = 16

// freshRecordsFields are the records fields of a Fetch or ShareFetch
// response of at least minSplicedRecords bytes that do not lie in frame,
// in the order they are encoded; nil for other responses.
func freshRecordsFields(resp kmsg.Response, frame []byte) []*[]byte {
	var fields []*[]byte
	add := func(records *[]byte) {
		if len(*records) >= minSplicedRecords && !within(*records, frame) {
			fields = append(fields, records)
		}
	}
	switch r := resp.(type) {
	case *kmsg.FetchResponse:
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				add(&r.Topics[i].Partitions[j].RecordBatches)
			}
		}
	case *kmsg.ShareFetchResponse:
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				add(&r.Topics[i].Partitions[j].Records)
			}
		}
	}
	return fields
}

// appendSplicedResponseFrame is protocol.AppendResponseFrame for resp but
// for the records in fields (freshRecordsFields), which are returned as
// pieces to write in place (writeFrame) rather than copied into dst. The
// frame's size counts them. scratch is a buffer for the encoding with
// placeholders; the grown one is returned for reuse.
func appendSplicedResponseFrame(dst, scratch []byte, correlationID int32, resp kmsg.Response, fields []*[]byte, pieces []recordsPiece) (frame, grownScratch []byte, _ []recordsPiece, err error) {
	var placeholder [recordsPlaceholderLen]byte
	_, _ = rand.Read(placeholder[:]) // crypto/rand.Read never fails; no record can foresee it
	records := make([][]byte, len(fields))
	for i, f := range fields {
		records[i], *f = *f, placeholder[:]
	}
	scratch = wire.AppendResponseFrame(scratch[:0], correlationID, resp)
	for i, f := range fields {
		*f = records[i]
	}
	compact := wire.IsFlexible(resp.Key(), resp.GetVersion())
	start, from := len(dst), 0
	for _, recs := range records {
		at := bytes.Index(scratch[from:], placeholder[:])
		if at < 0 {
			return nil, scratch, pieces, fmt.Errorf("%w: a partition's records are not in its encoding", errSpliceLayout)
		}
		at += from
		prefixAt, ok := recordsPrefixAt(scratch[:at], compact)
		if !ok {
			return nil, scratch, pieces, fmt.Errorf("%w: no length before a partition's records", errSpliceLayout)
		}
		dst = append(dst, scratch[from:prefixAt]...)
		if compact {
			dst = binary.AppendUvarint(dst, uint64(len(recs))+1)
		} else {
			dst = binary.BigEndian.AppendUint32(dst, uint32(len(recs)))
		}
		pieces = append(pieces, recordsPiece{at: len(dst) - start, records: recs})
		from = at + recordsPlaceholderLen
	}
	dst = append(dst, scratch[from:]...)
	size := len(dst) - start - protocol.FrameSizeLen
	for _, recs := range records {
		size += len(recs)
	}
	if size > math.MaxInt32 {
		return nil, scratch, pieces, fmt.Errorf("%w: %d bytes with its records, more than a frame can be", errSpliceLayout, size)
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(size))
	return dst, scratch, pieces, nil
}

// recordsPrefixAt is where the length of a placeholder encoded at the end
// of before starts: a one-byte uvarint of its length plus one (compact), or
// an int32.
func recordsPrefixAt(before []byte, compact bool) (int, bool) {
	if compact {
		n := len(before) - 1
		return n, n >= 0 && before[n] == recordsPlaceholderLen+1
	}
	n := len(before) - 4
	return n, n >= 0 && binary.BigEndian.Uint32(before[n:]) == recordsPlaceholderLen
}
