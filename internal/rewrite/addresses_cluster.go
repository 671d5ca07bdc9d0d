package rewrite

import "github.com/twmb/franz-go/pkg/kmsg"

// metadata rewrites the broker list of a Metadata response, the list every
// client bootstraps from. It exists at all versions.
func (a Addresses) metadata(r *kmsg.MetadataResponse) error {
	for i := range r.Brokers {
		b := &r.Brokers[i]
		if err := a.remap(r.Key(), b.NodeID, &b.Host, &b.Port); err != nil {
			return err
		}
	}
	return nil
}

// describeCluster rewrites the broker list of a DescribeCluster response
// (the admin-client mirror of Metadata.Brokers).
//
// When the client asked for EndpointType 2 (controllers, v1+, KIP-919) the
// list holds controller endpoints instead. Per KIP-919 only a controller
// answers that request (a broker answers MISMATCHED_ENDPOINT_TYPE), so such a
// list can only come from an upstream that is itself a controller kproxy
// fronts, and its nodes go through the Mapper like any other. The Mapper
// sees the upstream host and port and must fail if it cannot serve them.
func (a Addresses) describeCluster(r *kmsg.DescribeClusterResponse) error {
	for i := range r.Brokers {
		b := &r.Brokers[i]
		if err := a.remap(r.Key(), b.NodeID, &b.Host, &b.Port); err != nil {
			return err
		}
	}
	return nil
}
