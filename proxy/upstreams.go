package proxy

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/tenant"
	"github.com/kproxy/kproxy/internal/upstreamclient"
)

// upstreams are kproxy's own clients of each cluster's upstream, as
// cfg.Clusters() lists the clusters, and each virtual cluster's name
// mapper, which resolves through them the topic ids it has not seen.
type upstreams struct {
	clients []*kgo.Client    // nil where none is needed or kproxy has no way in (canAskUpstream)
	names   []*tenant.Mapper // nil without virtual_clusters
}

// newUpstreams connects a client to the upstream of each cluster that
// needs one: a virtual cluster's name mapper, and the filters built from
// its sections (filter.Env.Upstream), ask it.
func newUpstreams(cfg *config.Config) (_ *upstreams, err error) {
	u := &upstreams{}
	defer func() {
		if err != nil {
			u.close()
		}
	}()
	for _, cl := range cfg.Clusters() {
		var client *kgo.Client
		if (len(cl.Config.Filters) > 0 || cl.Name != "") && canAskUpstream(cl.Config) {
			if client, err = upstreamclient.New(cl.Config.Upstream); err != nil {
				return nil, err
			}
		}
		u.clients = append(u.clients, client)
		u.names = append(u.names, newNameMapper(cl, client))
	}
	return u, nil
}

// requester is how cluster i's filters ask its upstream: in the virtual
// cluster's names, through its name mapper; nil without a client.
func (u *upstreams) requester(i int) filter.Requester {
	switch {
	case u.clients[i] == nil:
		return nil
	case u.names[i] != nil:
		return tenantRequester{upstream: u.clients[i], names: u.names[i]}
	default:
		return u.clients[i]
	}
}

func (u *upstreams) close() {
	for _, cl := range u.clients {
		if cl != nil {
			cl.Close()
		}
	}
}

// canAskUpstream reports whether kproxy has its own way into the cluster:
// in SASL passthrough mode without upstream.sasl only clients hold
// credentials, and a topic id not seen here stays UNKNOWN_TOPIC_ID.
func canAskUpstream(cfg *config.Config) bool {
	sa := cfg.Listeners.SASL
	return sa == nil || sa.Mode != config.SASLModePassthrough || cfg.Upstream.SASL != nil
}
