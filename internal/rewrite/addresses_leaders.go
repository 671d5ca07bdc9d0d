package rewrite

import "github.com/twmb/franz-go/pkg/kmsg"

// The responses below carry KIP-951 "new leader" endpoints: when a partition
// answers NOT_LEADER_OR_FOLLOWER the broker attaches the address of the new
// leader so the client can move without a Metadata round trip. A client
// follows them directly, so they are as dangerous to leak as Metadata.
//
// In kmsg they are tagged fields: Produce and Fetch encode them whenever the
// version is flexible (Kafka defines them from Produce v10 and Fetch v16),
// ShareFetch and ShareAcknowledge at every version. At versions where the
// field cannot be on the wire, a decoded response simply has an empty list.

// produce rewrites ProduceResponse.Brokers.
func (a Addresses) produce(r *kmsg.ProduceResponse) error {
	for i := range r.Brokers {
		b := &r.Brokers[i]
		if err := a.remap(r.Key(), b.NodeID, &b.Host, &b.Port); err != nil {
			return err
		}
	}
	return nil
}

// fetch rewrites FetchResponse.Brokers.
func (a Addresses) fetch(r *kmsg.FetchResponse) error {
	for i := range r.Brokers {
		b := &r.Brokers[i]
		if err := a.remap(r.Key(), b.NodeID, &b.Host, &b.Port); err != nil {
			return err
		}
	}
	return nil
}

// shareFetch rewrites ShareFetchResponse.NodeEndpoints.
func (a Addresses) shareFetch(r *kmsg.ShareFetchResponse) error {
	for i := range r.NodeEndpoints {
		e := &r.NodeEndpoints[i]
		if err := a.remap(r.Key(), e.NodeID, &e.Host, &e.Port); err != nil {
			return err
		}
	}
	return nil
}

// shareAcknowledge rewrites ShareAcknowledgeResponse.NodeEndpoints.
func (a Addresses) shareAcknowledge(r *kmsg.ShareAcknowledgeResponse) error {
	for i := range r.NodeEndpoints {
		e := &r.NodeEndpoints[i]
		if err := a.remap(r.Key(), e.NodeID, &e.Host, &e.Port); err != nil {
			return err
		}
	}
	return nil
}
