package rewrite

import (
	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/protocol"
)

// First versions that carry KIP-951 leader endpoints, per the Kafka protocol
// (kmsg also decodes the tag at earlier flexible versions, but a broker
// never sends it there).
const (
	produceEndpointsSince = 10
	fetchEndpointsSince   = 16
)

var _ filter.ResponseSelector = Addresses{}

// ResponseNeed keeps Produce and Fetch responses that cannot carry leader
// endpoints on the zero-copy path, and has those that can inspected rather
// than decoded: the endpoints appear only when a leader moved, and decoding
// every record-carrying Fetch response to find out would cost more than the
// rest of the proxy.
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
		return filter.Inspect
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
