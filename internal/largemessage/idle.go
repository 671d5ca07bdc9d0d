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
// record has a value above the threshold or the trigger header. A
// records area no larger than the threshold holds no larger value.
func cannotOffload(src []byte, r *rule) bool {
	return records.ProducedPassesUnread(src, func(recs []byte) bool {
		small := int64(len(recs)) <= r.threshold
		named := bytes.Contains(recs, r.trigger)
		return small && !named || !records.AnyRecord(recs, func(rec records.RawRecord) bool {
			return (!small && int64(len(rec.Value)) > r.threshold) || named && rec.HasHeader(r.trigger)
		})
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
// one by KafScale's rule (resolving reads no other); records without the
// pointer's marker anywhere hold none.
func mayHoldPointer(src []byte) bool {
	return !records.PassesUnread(src, func(recs []byte) bool {
		return !pointer.MarkerIn(recs) || !records.AnyRecord(recs, func(rec records.RawRecord) bool { return pointer.Detect(rec.Value) })
	})
}

// shareFetchMayResolve is fetchMayResolve for ShareFetch response bodies.
func shareFetchMayResolve(version int16, body []byte) bool {
	found, err := wire.AnyShareFetchRecords(version, body, mayHoldPointer)
	return found || err != nil
}
