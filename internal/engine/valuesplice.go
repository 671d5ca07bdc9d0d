package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/protocol"
)

// A framePiece is a run of an encoded response frame's bytes or a value
// a filter spliced (filter.Splicer), written in order: the frame as the
// client receives it, never whole in memory.
type framePiece struct {
	raw    []byte
	splice *filter.Splice
}

// splicedRecords is one partition's records holding spliced values.
type splicedRecords struct {
	records []byte
	at      []int // where each of splices starts in records
	splices []*filter.Splice
	start   int // where records starts in the frame
}

// errSpliceLayout is a spliced response the engine cannot lay out: a bug
// in the filter that spliced it, closing the connection.
var errSpliceLayout = errors.New("spliced fetch response")

// planValueSplices lays out frame, a response encoded as a frame whose
// partitions hold records (in order), with the values of splices (whose
// placeholders those records hold) in place of their placeholders: the
// partitions' records lengths (compact, or an int32) and the frame size
// grown by the values. It returns the pieces to write and the frame's new
// length.
func planValueSplices(frame []byte, compact bool, records [][]byte, splices []filter.Splice) ([]framePiece, int64, error) {
	parts, err := findSplicedRecords(records, splices)
	if err != nil {
		return nil, 0, err
	}
	for _, part := range parts {
		ph := part.splices[0].Placeholder[:]
		i := bytes.Index(frame, ph)
		part.start = i - part.at[0]
		if i < 0 || part.start < 0 || part.start+len(part.records) > len(frame) ||
			!bytes.Equal(frame[part.start:part.start+len(part.records)], part.records) {
			return nil, 0, fmt.Errorf("%w: a partition's records are not in its encoding", errSpliceLayout)
		}
	}
	slices.SortFunc(parts, func(a, b *splicedRecords) int { return a.start - b.start })
	pieces := []framePiece{{}} // the frame size, set below
	size, from := int64(len(frame)), protocol.FrameSizeLen
	for _, part := range parts {
		oldPrefix, newPrefix, grown, err := recordsLengthPrefix(frame[:part.start], compact, part)
		if err != nil {
			return nil, 0, err
		}
		prefixAt := part.start - len(oldPrefix)
		if prefixAt < from {
			return nil, 0, fmt.Errorf("%w: partitions' records overlap", errSpliceLayout)
		}
		pieces = append(pieces, framePiece{raw: frame[from:prefixAt]}, framePiece{raw: newPrefix})
		from = part.start
		for k, sp := range part.splices {
			at := part.start + part.at[k]
			pieces = append(pieces, framePiece{raw: frame[from:at]}, framePiece{splice: sp})
			from = at + filter.PlaceholderLen
		}
		size += grown + int64(len(newPrefix)-len(oldPrefix))
	}
	pieces = append(pieces, framePiece{raw: frame[from:]})
	if size-protocol.FrameSizeLen > math.MaxInt32 {
		return nil, 0, fmt.Errorf("%w: %d bytes with its spliced values, more than a frame can be", errSpliceLayout, size)
	}
	pieces[0].raw = binary.BigEndian.AppendUint32(nil, uint32(size-protocol.FrameSizeLen))
	return pieces, size, nil
}

// splicedPartitions are the partitions' records of resp, a Fetch or
// ShareFetch response at version, in the order they are encoded, and
// whether their lengths are compact (Fetch v12 on, every ShareFetch).
func splicedPartitions(resp kmsg.Response, version int16) (records [][]byte, compact, ok bool) {
	switch r := resp.(type) {
	case *kmsg.FetchResponse:
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				records = append(records, r.Topics[i].Partitions[j].RecordBatches)
			}
		}
		return records, version >= 12, true
	case *kmsg.ShareFetchResponse:
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				records = append(records, r.Topics[i].Partitions[j].Records)
			}
		}
		return records, true, true
	}
	return nil, false, false
}

// findSplicedRecords finds, for each splice, the partition whose records
// carry its placeholder, grouping them by partition in the order they
// come in the records.
func findSplicedRecords(partitions [][]byte, splices []filter.Splice) ([]*splicedRecords, error) {
	var parts []*splicedRecords
	found := 0
	for _, records := range partitions {
		var part *splicedRecords
		for k := range splices {
			sp := &splices[k]
			at := bytes.Index(records, sp.Placeholder[:])
			if at < 0 {
				continue
			}
			if part == nil {
				part = &splicedRecords{records: records}
				parts = append(parts, part)
			}
			part.at = append(part.at, at)
			part.splices = append(part.splices, sp)
			found++
		}
		if part != nil {
			sortByPosition(part)
		}
	}
	if found != len(splices) {
		return nil, fmt.Errorf("%w: %d placeholders added, %d found in the records", errSpliceLayout, len(splices), found)
	}
	return parts, nil
}

func sortByPosition(part *splicedRecords) {
	order := make([]int, len(part.at))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return part.at[a] - part.at[b] })
	at, sps := make([]int, len(order)), make([]*filter.Splice, len(order))
	for i, o := range order {
		at[i], sps[i] = part.at[o], part.splices[o]
	}
	part.at, part.splices = at, sps
	for i := 1; i < len(at); i++ {
		if at[i] < at[i-1]+filter.PlaceholderLen {
			part.at = nil // overlapping placeholders: reported by the caller
		}
	}
}

// recordsLengthPrefix checks that before (the frame up to a partition's
// records) ends with the records' length, compact (an unsigned varint of
// the length plus one) or an int32, and returns it, the length grown by
// the partition's spliced values, and the growth.
func recordsLengthPrefix(before []byte, compact bool, part *splicedRecords) (oldPrefix, newPrefix []byte, grown int64, err error) {
	if part.at == nil {
		return nil, nil, 0, fmt.Errorf("%w: overlapping placeholders", errSpliceLayout)
	}
	n := int64(len(part.records))
	for _, sp := range part.splices {
		if sp.Size < 0 {
			return nil, nil, 0, fmt.Errorf("%w: a value of %d bytes", errSpliceLayout, sp.Size)
		}
		grown += sp.Size - filter.PlaceholderLen
	}
	if n+grown > math.MaxInt32-1 {
		return nil, nil, 0, fmt.Errorf("%w: a partition's records of %d bytes with their spliced values", errSpliceLayout, n+grown)
	}
	if compact {
		oldPrefix = binary.AppendUvarint(nil, uint64(n+1))
		newPrefix = binary.AppendUvarint(nil, uint64(n+grown+1))
	} else {
		oldPrefix = binary.BigEndian.AppendUint32(nil, uint32(n))
		newPrefix = binary.BigEndian.AppendUint32(nil, uint32(n+grown))
	}
	if !bytes.HasSuffix(before, oldPrefix) {
		return nil, nil, 0, fmt.Errorf("%w: a partition's records length is not before its records", errSpliceLayout)
	}
	return oldPrefix, newPrefix, grown, nil
}
