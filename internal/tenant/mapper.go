package tenant

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Requester sends a request to the cluster as kproxy itself; *kgo.Client
// is one (as policy.Requester).
type Requester interface {
	Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
}

// Mapper maps one virtual cluster's names to the upstream's and back. It
// is safe for concurrent use by every connection of the virtual cluster.
type Mapper struct {
	names     Names
	clusterID string
	ids       *topicIDs
}

// Option configures a Mapper.
type Option func(*Mapper)

// WithClusterID makes Metadata and DescribeCluster responses carry id as
// the cluster id instead of the upstream's ("" keeps the upstream's).
func WithClusterID(id string) Option { return func(m *Mapper) { m.clusterID = id } }

// WithUpstream lets the Mapper ask the cluster, through r, for the name of
// a topic id it has not seen in a response (behind a load balancer the
// client may have learned it through another replica). Without it such an
// id is treated as another tenant's.
func WithUpstream(r Requester) Option { return func(m *Mapper) { m.ids.upstream = r } }

// New returns the Mapper of a virtual cluster with names.
func New(names Names, opts ...Option) *Mapper {
	m := &Mapper{names: names, ids: newTopicIDs()}
	for _, opt := range opts {
		opt(m)
	}
	return m
}

// Names is the virtual cluster's prefixes.
func (m *Mapper) Names() Names { return m.names }

// ClusterID is the cluster id responses carry, "" for the upstream's.
func (m *Mapper) ClusterID() string { return m.clusterID }
