package tenant

import (
	"sync/atomic"

	"github.com/kproxy/kproxy/internal/topicids"
)

// Mapper maps one virtual cluster's names to the upstream's and back. It
// is safe for concurrent use by every connection of the virtual cluster.
type Mapper struct {
	names     Names
	clusterID string
	// upstreamClusterID is the upstream's cluster id, as last seen in a
	// response the Mapper replaced it in.
	upstreamClusterID atomic.Pointer[string]
	ids               *topicIDs
	table             table
}

// Option configures a Mapper.
type Option func(*Mapper)

// WithClusterID makes Metadata and DescribeCluster responses carry id as
// the cluster id instead of the upstream's ("" keeps the upstream's).
func WithClusterID(id string) Option { return func(m *Mapper) { m.clusterID = id } }

// WithTopicNamer names topic ids through n, typically a
// topicids.NewResolver asking the cluster as kproxy itself, so that an id
// the client learned through another kproxy replica is still its own.
// Without it only ids seen in this Mapper's responses are known; any other
// id is treated as another tenant's (UNKNOWN_TOPIC_ID).
func WithTopicNamer(n TopicNamer) Option { return func(m *Mapper) { m.ids.namer = n } }

// New returns the Mapper of a virtual cluster with names.
func New(names Names, opts ...Option) *Mapper {
	m := &Mapper{names: names, ids: newTopicIDs(topicids.NewResolver(nil, &topicids.Map{})), table: buildTable()}
	for _, opt := range opts {
		opt(m)
	}
	return m
}

// Names is the virtual cluster's prefixes.
func (m *Mapper) Names() Names { return m.names }

// ClusterID is the cluster id responses carry, "" for the upstream's.
func (m *Mapper) ClusterID() string { return m.clusterID }
