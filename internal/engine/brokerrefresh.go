package engine

import (
	"context"

	"github.com/kproxy/kproxy/internal/periodic"
)

// refreshBrokers asks the cluster for its brokers every
// upstream.metadata_refresh until ctx ends, so that a node added while
// kproxy runs gets its listener here even when every Metadata naming it
// went through another replica: behind a balancer, a client told of the
// node by one replica may connect to it through any other. A failure is
// logged and retried at the next tick; listeners already open stay.
func (s *Server) refreshBrokers(ctx context.Context) {
	periodic.Every(ctx, s.cfg.Upstream.MetadataRefresh, func() {
		before := s.nodes.count()
		if err := s.fetchBrokers(ctx); err != nil {
			if ctx.Err() == nil {
				s.log.Warn().Err(err).Msg("periodic upstream metadata refresh failed; brokers known so far stay served")
			}
			return
		}
		if after := s.nodes.count(); after != before {
			s.log.Info().Int("brokers", after).Msg("periodic upstream metadata refresh found new brokers")
		}
	})
}
