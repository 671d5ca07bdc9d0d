package rewrite

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Addresses is a response filter that replaces every upstream broker address a
// response carries with the address Mapper hands out for that node, so that
// clients keep connecting through kproxy instead of going around it.
//
// The contract is all-or-nothing: if Mapper fails for any node the whole
// FilterResponse call fails, and the caller must not forward the (partially
// rewritten) response. Leaking one upstream address is enough for a client to
// bypass the proxy for good, so there is no best effort.
//
// Addresses holds no state of its own; it is safe for concurrent use when
// Mapper is.
type Addresses struct {
	Mapper BrokerMapper
}

// ResponseKeys returns the API keys of every response kind known to carry a
// broker (or controller) address:
//
//	Metadata(3), FindCoordinator(10), DescribeCluster(60), Produce(0),
//	Fetch(1), ShareFetch(78), ShareAcknowledge(79), DescribeQuorum(55).
//
// A new slice is returned on each call so callers may keep or modify it.
func (Addresses) ResponseKeys() []int16 {
	return []int16{
		3,  // Metadata
		10, // FindCoordinator
		60, // DescribeCluster
		0,  // Produce (KIP-951 leader endpoints)
		1,  // Fetch (KIP-951 leader endpoints)
		78, // ShareFetch
		79, // ShareAcknowledge
		55, // DescribeQuorum
	}
}

// FilterResponse rewrites, in place, every broker address in resp. resp must
// be one of the concrete *kmsg response types for the keys listed by
// ResponseKeys; any other type is an error, because silently passing through
// a response we were asked to sanitize could leak addresses.
//
// On error resp may be partially rewritten and must be discarded.
func (a Addresses) FilterResponse(resp kmsg.Response) error {
	if a.Mapper == nil {
		return errors.New("rewrite: Addresses has no Mapper")
	}
	switch r := resp.(type) {
	case *kmsg.MetadataResponse:
		return a.metadata(r)
	case *kmsg.FindCoordinatorResponse:
		return a.findCoordinator(r)
	case *kmsg.DescribeClusterResponse:
		return a.describeCluster(r)
	case *kmsg.ProduceResponse:
		return a.produce(r)
	case *kmsg.FetchResponse:
		return a.fetch(r)
	case *kmsg.ShareFetchResponse:
		return a.shareFetch(r)
	case *kmsg.ShareAcknowledgeResponse:
		return a.shareAcknowledge(r)
	case *kmsg.DescribeQuorumResponse:
		describeQuorum(r)
		return nil
	default:
		return fmt.Errorf("rewrite: addresses: unsupported response type %T", resp)
	}
}

// remap asks the Mapper for the client-facing address of one node and stores
// it through host and port. key names the API in the error, so that a failure
// in the logs says which response could not be forwarded.
//
// Working through pointers lets one helper serve the many distinct broker
// struct types kmsg generates, which share field names but not a type.
func (a Addresses) remap(key int16, nodeID int32, host *string, port *int32) error {
	h, p, err := a.Mapper.MapBroker(nodeID, *host, *port)
	if err != nil {
		return fmt.Errorf("rewrite %s broker %d: %w", kmsg.NameForKey(key), nodeID, err)
	}
	*host, *port = h, p
	return nil
}
