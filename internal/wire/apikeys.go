package wire

import "github.com/twmb/franz-go/pkg/kmsg"

// API keys kproxy itself treats specially. Every other key is identified by
// kmsg.Key.
const (
	ProduceKey          = int16(kmsg.Produce)
	FetchKey            = int16(kmsg.Fetch)
	MetadataKey         = int16(kmsg.Metadata)
	FindCoordinatorKey  = int16(kmsg.FindCoordinator)
	SASLHandshakeKey    = int16(kmsg.SASLHandshake)
	APIVersionsKey      = int16(kmsg.ApiVersions)
	SASLAuthenticateKey = int16(kmsg.SASLAuthenticate)
	DescribeClusterKey  = int16(kmsg.DescribeCluster)
	ShareFetchKey       = int16(kmsg.ShareFetch)
	ShareAcknowledgeKey = int16(kmsg.ShareAcknowledge)
)

// APIName is the Kafka name of key, or "Unknown".
func APIName(key int16) string { return kmsg.NameForKey(key) }
