package engine

import (
	"cmp"
	"slices"

	"github.com/kproxy/kproxy/filter"
)

// Chain lists the server's filters in the order a request passes them,
// each with its phase; a response passes them in reverse. It is complete
// once Start has registered them, and includes the engine's stages: the
// session guards, quotas and the virtual cluster's name boundary (the
// quota engine and name mapper WithFilters was given: stages.go).
func (s *Server) Chain() []filter.Link {
	chain := append([]filter.Link(nil), s.chain...)
	if s.holder != nil {
		chain = append(chain, s.holder.link())
	}
	if s.boundary != nil {
		chain = append(chain, s.boundary.link())
	}
	slices.SortStableFunc(chain, func(a, b filter.Link) int { return cmp.Compare(a.Phase, b.Phase) })
	return chain
}
