package largemessage

import (
	"bytes"

	"github.com/kproxy/kproxy/internal/largemessage/pointer"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/rewrite/records"
)

// A topic with offload configured but few large records pays for the
// filter only where it may have work: these checks read raw batches
// (attributes, sizes, a byte search) so that the rest is forwarded with
// neither CRC check nor record decoding, nor, for fetches, the response
// decoded and re-encoded.

// cannotOffload reports that no record of src (a partition's produced
// batches) can be offloaded under r: every batch is uncompressed, its
// records area no larger than the threshold (so no value is larger) and
// without the trigger header's name anywhere.
func cannotOffload(src []byte, r *rule) bool {
	return records.PassesUnread(src, func(recs []byte) bool {
		return int64(len(recs)) <= r.threshold && !bytes.Contains(recs, r.trigger)
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

// mayHoldPointer is fetchMayResolve's test of one partition's records.
func mayHoldPointer(src []byte) bool {
	return !records.PassesUnread(src, func(recs []byte) bool { return !pointer.MayBeIn(recs) })
}

// shareFetchMayResolve is fetchMayResolve for ShareFetch response bodies.
func shareFetchMayResolve(version int16, body []byte) bool {
	found, err := wire.AnyShareFetchRecords(version, body, mayHoldPointer)
	return found || err != nil
}
