package server

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/proxy"
	"github.com/kproxy/kproxy/internal/tenant"
	"github.com/kproxy/kproxy/internal/topicids"
)

// nameMapping puts a virtual cluster's name mapper at its engine's name
// boundary: its prefixes and cluster id, and upstream (nil: none) to name
// topic ids the mapper has not seen in a response. A file without
// virtual_clusters maps nothing.
func nameMapping(cl config.Cluster, upstream *kgo.Client) []proxy.Option {
	if cl.Name == "" {
		return nil
	}
	opts := []tenant.Option{tenant.WithClusterID(cl.ClusterID)}
	if upstream != nil {
		opts = append(opts, tenant.WithTopicNamer(topicids.NewResolver(upstream, &topicids.Map{})))
	}
	names := tenant.Names{Topic: cl.TopicPrefix, Group: cl.GroupPrefix, TransactionalID: cl.TransactionalIDPrefix}
	return []proxy.Option{proxy.WithNameMapper(tenant.New(names, opts...))}
}
