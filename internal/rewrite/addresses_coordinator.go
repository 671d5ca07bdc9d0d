package rewrite

import "github.com/twmb/franz-go/pkg/kmsg"

// findCoordinator rewrites the coordinator address(es) of a FindCoordinator
// response.
//
// v0–v3 answer for a single key with top-level NodeID/Host/Port; v4+
// (KIP-699) answer in batch through Coordinators and no longer encode the
// top-level fields. Only the fields that go on the wire at r's version are
// rewritten, so the Mapper is never asked about an address the client will
// not see.
//
// A coordinator lookup that failed (COORDINATOR_NOT_AVAILABLE and friends)
// is answered by Kafka with node -1, an empty host and port -1. Such entries
// carry no address to leak, and asking the Mapper about node -1 would at
// best fail the whole response and at worst open a listener for a node that
// does not exist, so they are left exactly as the upstream sent them for the
// client to see the error.
func (a Addresses) findCoordinator(r *kmsg.FindCoordinatorResponse) error {
	if r.Version <= 3 {
		if isErrorCoordinator(r.NodeID, r.Host) {
			return nil
		}
		return a.remap(r.Key(), r.NodeID, &r.Host, &r.Port)
	}
	for i := range r.Coordinators {
		c := &r.Coordinators[i]
		if isErrorCoordinator(c.NodeID, c.Host) {
			continue
		}
		if err := a.remap(r.Key(), c.NodeID, &c.Host, &c.Port); err != nil {
			return err
		}
	}
	return nil
}

// isErrorCoordinator reports whether a coordinator answer is Kafka's
// "no node" placeholder rather than a real address.
func isErrorCoordinator(nodeID int32, host string) bool {
	return nodeID < 0 || host == ""
}
