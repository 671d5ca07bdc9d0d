package rewrite

import "github.com/twmb/franz-go/pkg/kmsg"

// describeQuorum removes the controller listeners from a DescribeQuorum
// response.
//
// Since v2 (KIP-853) the response lists, per voter node, the host:port of
// its controller listeners. kproxy only fronts broker listeners: the node ids
// in this list are controller ids, which need not match any broker id (and in
// combined mode the same id names a broker listener on another port), so
// there is no proxy address that would be correct to hand out. Rewriting
// through the Mapper would point clients at the wrong process; passing them
// through would leak the controllers' real addresses. Clearing the lists is
// the only safe answer, and it is a legal one: the field is informational for
// admin tools, and a nil list encodes as an empty array.
//
// The node ids themselves, and the replica state in Topics, are kept: they
// carry no address.
func describeQuorum(r *kmsg.DescribeQuorumResponse) {
	for i := range r.Nodes {
		r.Nodes[i].Listeners = nil
	}
}
