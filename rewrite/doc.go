// Package rewrite holds the response filters that keep clients talking to
// kproxy: broker-address rewriting and ApiVersions clamping.
//
// Each is a filter.Filter whose handlers work on an already decoded
// kmsg.Response and mutate it in place; the proxy engine decodes a response
// once, runs every interested handler over it, and encodes it once.
// Addresses also looks at the raw bytes of Produce and Fetch responses
// first, so that most of them stay on the zero-copy path.
//
// The filters are:
//
//   - Addresses, which replaces every upstream broker address a response
//     carries (Metadata, FindCoordinator, DescribeCluster, the KIP-951 leader
//     endpoints of Produce, Fetch, ShareFetch and ShareAcknowledge) with the
//     one a BrokerMapper hands out, and drops the controller listeners of
//     DescribeQuorum, so that clients never learn an address that bypasses
//     the proxy; which responses those are, and where in them, is the
//     protocol package's API table;
//   - APIVersionsClamp, which limits the API keys and versions a client may
//     negotiate to those kmsg can decode, so that every response the engine
//     may need to filter is one it can read.
//
// Filters hold no mutable state and are safe for concurrent use as long as
// the BrokerMapper they are given is.
package rewrite

// BrokerMapper tells a rewriter what address clients must be given for an
// upstream broker.
//
// MapBroker is called for every (node id, host, port) a response carries,
// with the upstream's values. It returns the host and port that clients must
// be told instead. Implementations may block (for example to open the
// listener for a node seen for the first time) and must return an error when
// no safe address exists; the rewriter then fails the whole response rather
// than leak the upstream address.
type BrokerMapper interface {
	MapBroker(nodeID int32, host string, port int32) (string, int32, error)
}
