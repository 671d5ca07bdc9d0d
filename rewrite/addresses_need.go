package rewrite

import (
	"github.com/kproxy/kproxy/filter"
)

// ResponseNeed keeps responses on the zero-copy path at versions whose
// encoding cannot carry endpoints (the row's EndpointsSince). Above it, a
// response with a walk to its top-level tags is not decoded for nothing:
// a small one (Produce) is inspected and decoded only when it does carry
// endpoints; one carrying records (Fetch) stays streamed, its endpoints
// (there only when a leader moved) dropped rather than rewritten, which
// costs the client one metadata refresh (what clients did before KIP-951)
// instead of costing every fetch a copy through user space. Every other
// response with endpoints is decoded.
func (a Addresses) ResponseNeed(key, version int16) filter.Need {
	api, ok := a.apis().API(key)
	switch {
	case !ok || !api.HasEndpoints():
		return filter.Decode
	case version < api.EndpointsSince:
		return filter.Stream
	case api.WalkToTags == nil:
		return filter.Decode
	case api.ResponseRecords:
		return filter.DropTopLevelTags
	}
	return filter.Inspect
}

// InspectResponse says whether a response body carries top-level tagged
// fields, where the leader endpoints live. A body the walk cannot parse,
// or of an API without a walk, is decoded, so that decoding reports the
// problem.
func (a Addresses) InspectResponse(key, version int16, body []byte) bool {
	api, ok := a.apis().API(key)
	if !ok || api.WalkToTags == nil {
		return true
	}
	tagged, err := api.ResponseHasTopLevelTags(version, body)
	return err != nil || tagged
}
