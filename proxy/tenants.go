package proxy

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/engine"
	"github.com/kproxy/kproxy/internal/tenant"
	"github.com/kproxy/kproxy/internal/topicids"
	"github.com/kproxy/kproxy/policy"
)

// newNameMapper is a virtual cluster's name mapper: its prefixes and
// cluster id, and upstream (nil: none) to name topic ids the mapper has not
// seen in a response. A file without virtual_clusters has none (nil).
func newNameMapper(cl config.Cluster, upstream *kgo.Client) *tenant.Mapper {
	if cl.Name == "" {
		return nil
	}
	opts := []tenant.Option{tenant.WithClusterID(cl.ClusterID)}
	if upstream != nil {
		opts = append(opts, tenant.WithTopicNamer(topicids.NewResolver(upstream, &topicids.Map{})))
	}
	names := tenant.Names{Topic: cl.TopicPrefix, Group: cl.GroupPrefix, TransactionalID: cl.TransactionalIDPrefix}
	return tenant.New(names, opts...)
}

// nameMapping puts m (nil: none) at the engine's name boundary, with
// cl's cluster operators.
func nameMapping(m *tenant.Mapper, cl config.Cluster) ([]engine.Option, error) {
	if m == nil {
		return nil, nil
	}
	isOperator, err := policy.ConnMatcher(cl.ClusterOperators)
	if err != nil {
		return nil, fmt.Errorf("virtual cluster %s: cluster_operators: %w", cl.Name, err)
	}
	return []engine.Option{engine.WithFilters(m), engine.WithClusterOperators(isOperator)}, nil
}

// tenantRequester asks the upstream as kproxy does and answers in the
// tenant's names. A virtual cluster's policy sees the tenant's names (its
// rules are written in them), so it resolves topic ids through this: an
// id of the tenant's own topic is named as the tenant names it, and one of
// another tenant's is not named at all (the upstream's name would match
// no rule of the tenant's, and so slip past a deny).
type tenantRequester struct {
	upstream policy.Requester
	names    *tenant.Mapper
}

func (r tenantRequester) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	resp, err := r.upstream.Request(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := r.names.MapResponse(req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}
