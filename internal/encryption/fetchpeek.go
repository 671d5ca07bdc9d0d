package encryption

import (
	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/encryption/envelope"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/rewrite/records"
)

// Fetch responses without an encrypted record, as on the topics encryption
// does not cover, are forwarded as read, neither decoded nor re-encoded: a
// raw walk finds whether any partition may hold the marker header before
// the engine decodes one.

// fetchNeed is what fetch needs of a Fetch response of version: the raw
// walk reads flexible versions only.
func fetchNeed(version int16) filter.Need {
	if wire.IsFlexible(wire.FetchKey, version) {
		return filter.Inspect
	}
	return filter.Decode
}

// fetchWantsDecoding says whether the Fetch response body of version may hold
// an encrypted record: some partition has a compressed batch or the
// marker header's name in its records. A body the walk cannot read is
// decoded, which reports what is wrong with it.
func fetchWantsDecoding(version int16, body []byte) bool {
	found, err := wire.AnyFetchRecords(version, body, mayHoldMarker)
	return found || err != nil
}

// mayHoldMarker is fetchWantsDecoding's test of one partition's records.
func mayHoldMarker(src []byte) bool {
	return records.MayHoldHeader(src, []byte(envelope.HeaderName))
}

// shareFetchNeed is what shareFetch needs of a ShareFetch response of
// version: its raw walk reads the versions it knows (v0 and v1), and
// refuses the others, which are then decoded anyway.
func shareFetchNeed(int16) filter.Need { return filter.Inspect }

// shareFetchWantsDecoding is fetchWantsDecoding for ShareFetch response bodies.
func shareFetchWantsDecoding(version int16, body []byte) bool {
	found, err := wire.AnyShareFetchRecords(version, body, mayHoldMarker)
	return found || err != nil
}
