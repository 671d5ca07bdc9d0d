package engine

import (
	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/quota"
	"github.com/kproxy/kproxy/internal/tenant"
)

// asStage makes f one of the engine's own stages of the chain, when it is
// one, reporting whether it was: those run around the filters' handlers
// rather than as handlers, and are reached through WithFilters, not
// options of their own.
//
// A quota engine is the quota stage (quota.go): it holds each request to
// its connection's quota rules (docs/quotas.md) once the request filters
// passed it, and its response until it is delivered.
//
// A name mapper is the name boundary (names.go, filter.PhaseNames): a
// virtual cluster's clients use its names, the upstream the prefixed ones.
// A request is mapped after every request filter (so filters, the policy
// included, see the client's names), just before it is encoded for the
// upstream; a response is mapped right after it is decoded, before any
// Verdict.OnResponse hook and any response filter. Keys and versions the
// mapper needs nothing of stay streamed; those it maps raw (Produce's
// names, Fetch v0-12 responses) are buffered and rewritten without
// decoding; the rest are decoded once, for it and the filters together.
func (s *Server) asStage(f filter.Filter) bool {
	switch st := f.(type) {
	case *quota.Engine:
		if st != nil {
			s.quotas, s.holder = st, quotaHolder{}
		}
		return true
	case *tenant.Mapper:
		if st != nil {
			s.boundary = nameBoundary{m: st}
		}
		return true
	}
	return false
}
