package engine

import "github.com/kproxy/kproxy/filter"

// hookInspection is what the request handlers' response hooks say of
// their need to see the response (filter.Verdict.InspectResponse).
type hookInspection struct {
	wants []func(version int16, body []byte) bool
	// always: some hook has no InspectResponse, so it sees every
	// response, decoded.
	always bool
}

// add notes the hooks of v, a verdict with OnResponse or a spliced hook
// set.
func (h *hookInspection) add(v filter.Verdict) {
	if v.InspectResponse == nil {
		h.always = true
		return
	}
	h.wants = append(h.wants, v.InspectResponse)
}

// joinInto makes owed's response hook ask h's inspections before the
// response is decoded for it, unless some hook needs every response.
func (h *hookInspection) joinInto(owed *pending) {
	switch {
	case h.always || len(h.wants) == 0:
	case len(h.wants) == 1: // nearly always: no closure to allocate
		owed.hookWants = h.wants[0]
	default:
		wants := h.wants
		owed.hookWants = func(version int16, body []byte) bool {
			for _, w := range wants {
				if w(version, body) {
					return true
				}
			}
			return false
		}
	}
}

// hookNeed is what owed's response hook, if any, needs of its response.
func hookNeed(owed *pending) filter.Need {
	switch {
	case owed.onResponse == nil:
		return filter.Stream
	case owed.hookWants != nil:
		return filter.Inspect
	}
	return filter.Decode
}

// hookWantsBody says whether owed's response hook must see body decoded.
func hookWantsBody(owed *pending, body []byte) bool {
	return owed.onResponse != nil && (owed.hookWants == nil || owed.hookWants(owed.version, body))
}
