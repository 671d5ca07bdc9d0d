package rewrite

import "github.com/kproxy/kproxy/filter"

var _ filter.Placed = Addresses{}

// Phase places the rewriter in filter.PhaseAddresses: last on a
// response, it sees every address a filter may have added.
func (Addresses) Phase() filter.Phase { return filter.PhaseAddresses }

// Register registers FilterResponse for every key of ResponseKeys, with
// ResponseNeed and InspectResponse saying per version what must be
// decoded.
func (a Addresses) Register(r *filter.Registry) {
	for _, key := range a.ResponseKeys() {
		filter.OnResponseKey(r, key, a.FilterResponse,
			filter.NeedByVersion(func(version int16) filter.Need { return a.ResponseNeed(key, version) }),
			filter.InspectRaw(func(version int16, body []byte) bool { return a.InspectResponse(key, version, body) }))
	}
}
