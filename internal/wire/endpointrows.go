package wire

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// endpointRows is what the API table knows beyond kmsg: where responses
// carry broker endpoints, and which responses can be walked while they
// stream. kmsgAPIs fills in each row's name and constructors.
//
// The KIP-951 "new leader" endpoints of Produce, Fetch, ShareFetch and
// ShareAcknowledge let a client that was told NOT_LEADER_OR_FOLLOWER move
// without a Metadata round trip; a client follows them directly, so they
// are as dangerous to leak as Metadata's. In kmsg they are tagged fields:
// Produce and Fetch encode them whenever the version is flexible, and
// Share* at every version. Kafka defines the field from Produce v10 and
// Fetch v16, but kmsg (so kfake, kproxy's embedded upstream, and franz-go
// clients) encodes and decodes it at every flexible version: kfake sends it
// with Produce v9 and Fetch v12-v15 responses, and a client reads it there.
// So EndpointsSince is the first flexible version.
func endpointRows() []API {
	return []API{
		{
			Key: ProduceKey,
			Endpoints: []EndpointList{ListOf("Brokers",
				func(r *kmsg.ProduceResponse) []kmsg.ProduceResponseBroker { return r.Brokers },
				func(b *kmsg.ProduceResponseBroker) Endpoint { return broker(b.NodeID, &b.Host, &b.Port) })},
			EndpointsSince: 9,
			WalkToTags:     WalkProduceResponseToTags,
		},
		{
			Key: FetchKey,
			Endpoints: []EndpointList{ListOf("Brokers",
				func(r *kmsg.FetchResponse) []kmsg.FetchResponseBroker { return r.Brokers },
				func(b *kmsg.FetchResponseBroker) Endpoint { return broker(b.NodeID, &b.Host, &b.Port) })},
			EndpointsSince:  12,
			WalkToTags:      WalkFetchResponseToTags,
			ResponseRecords: true,
		},
		{
			// The broker list every client bootstraps from.
			Key: MetadataKey,
			Endpoints: []EndpointList{ListOf("Brokers",
				func(r *kmsg.MetadataResponse) []kmsg.MetadataResponseBroker { return r.Brokers },
				func(b *kmsg.MetadataResponseBroker) Endpoint { return broker(b.NodeID, &b.Host, &b.Port) })},
		},
		{
			// v0-v3 answer for one key with top-level NodeID/Host/Port; v4+
			// (KIP-699) answer in batch through Coordinators and no longer
			// encode the top-level fields. Each is visited only at the
			// versions that put it on the wire, so a rewriter is never asked
			// about an address the client will not see.
			Key: FindCoordinatorKey,
			Endpoints: []EndpointList{
				OneOf("Coordinator", func(r *kmsg.FindCoordinatorResponse, i int) (Endpoint, bool) {
					return coordinator(r.NodeID, &r.Host, &r.Port), i == 0 && r.Version <= 3
				}),
				ListOf("Coordinators",
					func(r *kmsg.FindCoordinatorResponse) []kmsg.FindCoordinatorResponseCoordinator {
						if r.Version <= 3 {
							return nil
						}
						return r.Coordinators
					},
					func(c *kmsg.FindCoordinatorResponseCoordinator) Endpoint {
						return coordinator(c.NodeID, &c.Host, &c.Port)
					}),
			},
		},
		{
			// The admin-client mirror of Metadata.Brokers. When the client
			// asked for EndpointType 2 (controllers, v1+, KIP-919) the list
			// holds controller endpoints instead; only a controller answers
			// that (a broker answers MISMATCHED_ENDPOINT_TYPE), so such a
			// list comes from an upstream that is itself a controller kproxy
			// fronts, and its nodes are rewritten like any other.
			Key: DescribeClusterKey,
			Endpoints: []EndpointList{ListOf("Brokers",
				func(r *kmsg.DescribeClusterResponse) []kmsg.DescribeClusterResponseBroker { return r.Brokers },
				func(b *kmsg.DescribeClusterResponseBroker) Endpoint { return broker(b.NodeID, &b.Host, &b.Port) })},
		},
		{
			Key: int16(kmsg.ShareFetch),
			Endpoints: []EndpointList{ListOf("NodeEndpoints",
				func(r *kmsg.ShareFetchResponse) []kmsg.ShareFetchResponseNodeEndpoint { return r.NodeEndpoints },
				func(e *kmsg.ShareFetchResponseNodeEndpoint) Endpoint { return broker(e.NodeID, &e.Host, &e.Port) })},
			ResponseRecords: true,
		},
		{
			Key: int16(kmsg.ShareAcknowledge),
			Endpoints: []EndpointList{ListOf("NodeEndpoints",
				func(r *kmsg.ShareAcknowledgeResponse) []kmsg.ShareAcknowledgeResponseNodeEndpoint {
					return r.NodeEndpoints
				},
				func(e *kmsg.ShareAcknowledgeResponseNodeEndpoint) Endpoint { return broker(e.NodeID, &e.Host, &e.Port) })},
		},
		{
			Key:            int16(kmsg.DescribeQuorum),
			Endpoints:      []EndpointList{OneOf("Nodes.Listeners", quorumListener)},
			EndpointsSince: 2, // KIP-853
			StripEndpoints: stripQuorumListeners,
		},
	}
}

// broker is the endpoint of one element of a broker list. kmsg generates
// a distinct struct per list, with the same field names but no common type.
func broker(nodeID int32, host *string, port *int32) Endpoint {
	return Endpoint{NodeID: nodeID, Host: host, Port: Int32Port(port)}
}

// coordinator is a FindCoordinator answer. A lookup that failed
// (COORDINATOR_NOT_AVAILABLE and friends) is answered with node -1, an
// empty host and port -1: no address to leak, and no node to ask about.
func coordinator(nodeID int32, host *string, port *int32) Endpoint {
	return Endpoint{NodeID: nodeID, Host: host, Port: Int32Port(port), NoNode: nodeID < 0 || *host == ""}
}

// quorumListener is the i-th controller listener of a DescribeQuorum
// response (v2+, KIP-853), counting across its nodes.
func quorumListener(r *kmsg.DescribeQuorumResponse, i int) (Endpoint, bool) {
	for n := range r.Nodes {
		node := &r.Nodes[n]
		if i < len(node.Listeners) {
			l := &node.Listeners[i]
			return Endpoint{NodeID: node.NodeID, Host: &l.Host, Port: Uint16Port(&l.Port)}, true
		}
		i -= len(node.Listeners)
	}
	return Endpoint{}, false
}

// stripQuorumListeners removes the controller listeners from a
// DescribeQuorum response instead of rewriting them.
//
// kproxy only fronts broker listeners: the node ids in this list are
// controller ids, which need not match any broker id (and in combined mode
// the same id names a broker listener on another port), so there is no
// proxy address that would be correct to hand out. Rewriting would point
// clients at the wrong process; passing them through would leak the
// controllers' real addresses. Clearing the lists is the only safe answer,
// and a legal one: the field is informational for admin tools, and a nil
// list encodes as an empty array. The node ids, and the replica state in
// Topics, carry no address and are kept.
func stripQuorumListeners(resp kmsg.Response) error {
	r, ok := resp.(*kmsg.DescribeQuorumResponse)
	if !ok {
		return fmt.Errorf("%w: %T is not a DescribeQuorum response", ErrWrongResponseType, resp)
	}
	for i := range r.Nodes {
		r.Nodes[i].Listeners = nil
	}
	return nil
}
