package rewrite

import (
	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/protocol"
)

// First versions whose encoding can carry KIP-951 leader endpoints: the
// first flexible ones. Kafka defines the field from Produce v10 and Fetch
// v16, but it is a tagged field, and kmsg (so kfake, kproxy's embedded
// upstream, and franz-go clients) encodes and decodes it at every flexible
// version: kfake sends it with Produce v9 and Fetch v12-v15 responses, and a
// client reads it there. Inspecting from the first flexible version costs a
// tag walk and keeps those responses from leaking upstream addresses.
const (
	produceEndpointsSince = 9
	fetchEndpointsSince   = 12
)

// ResponseNeed keeps Produce and Fetch responses that cannot carry leader
// endpoints on the zero-copy path. Produce responses that can are small and
// inspected (decoded only when they do carry endpoints). Fetch responses
// carry records and stay streamed: endpoints there appear only when a leader
// moved, and are dropped rather than rewritten, which costs the client one
// metadata refresh (what clients did before KIP-951) instead of costing
// every fetch a copy through user space.
func (Addresses) ResponseNeed(key, version int16) filter.Need {
	switch key {
	case protocol.ProduceKey:
		if version < produceEndpointsSince {
			return filter.Stream
		}
		return filter.Inspect
	case protocol.FetchKey:
		if version < fetchEndpointsSince {
			return filter.Stream
		}
		return filter.DropTopLevelTags
	}
	return filter.Decode
}

// InspectResponse says whether a Produce or Fetch response carries
// top-level tagged fields, where the leader endpoints live. A body the walk
// cannot parse is decoded, so that decoding reports the problem.
func (Addresses) InspectResponse(key, version int16, body []byte) bool {
	var tagged bool
	var err error
	switch key {
	case protocol.ProduceKey:
		tagged, err = protocol.ProduceResponseHasTopLevelTags(version, body)
	case protocol.FetchKey:
		tagged, err = protocol.FetchResponseHasTopLevelTags(version, body)
	default:
		return true
	}
	return err != nil || tagged
}
