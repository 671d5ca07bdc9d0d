package largemessage

import (
	"bytes"

	"github.com/kproxy/kproxy/internal/largemessage/pointer"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/rewrite/records"
)

// A topic with offload configured but few large records pays for the
// filter only where it may have work: these checks read raw batches
// (attributes, sizes, a byte search for a name, and each record's framing
// only where the name is found or a value may be large) so that the rest
// is forwarded with neither CRC check nor record decoding, nor, for
// fetches, the response decoded and re-encoded.

// cannotOffload reports that no record of src (a partition's produced
// batches) can be offloaded under r: every batch is whole and uncompressed and no
// record has a value above the threshold or the trigger header.
//
// Records of some size are read by their framing alone, a few bytes each
// (records.AnyLargeValueOrHeader). Small ones cost less read as bytes: a
// records area no larger than the threshold holds no larger value, so
// without the trigger header's name anywhere in it nothing is to be done.
func cannotOffload(src []byte, r *rule) bool {
	return records.ProducedPassesUnread(src, func(recs []byte) bool {
		if int64(len(recs)) <= r.threshold && !records.SkimBeatsSearch(recs) && !bytes.Contains(recs, r.trigger) {
			return true
		}
		return !records.AnyLargeValueOrHeader(recs, r.threshold, r.trigger)
	})
}

// fetchMayResolve says whether the Fetch response body of version may
// hold a pointer: some partition has a compressed batch or the pointer's
// marker in its records. A body the walk cannot read is decoded, which
// reports what is wrong with it.
func fetchMayResolve(version int16, body []byte) bool {
	found, err := wire.AnyFetchRecords(version, body, mayHoldPointer)
	return found || err != nil
}

// mayHoldPointer is fetchMayResolve's test of one partition's records:
// whether a compressed batch may hold a pointer, or a record's value is
// one by KafScale's rule (resolving reads no other). Small records without
// the pointer's marker anywhere hold none; larger ones are read by their
// framing, where a value that does not start with '{' is no pointer.
func mayHoldPointer(src []byte) bool {
	return !records.PassesUnread(src, func(recs []byte) bool {
		if !records.SkimBeatsSearch(recs) && !pointer.MarkerIn(recs) {
			return true
		}
		return !records.AnyValue(recs, pointer.Detect)
	})
}

// shareFetchMayResolve is fetchMayResolve for ShareFetch response bodies.
func shareFetchMayResolve(version int16, body []byte) bool {
	found, err := wire.AnyShareFetchRecords(version, body, mayHoldPointer)
	return found || err != nil
}
