package rewrite

import "github.com/kproxy/kproxy/filter"

var _ filter.Filter = Addresses{}

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
