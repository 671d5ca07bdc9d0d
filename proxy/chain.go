package proxy

import "github.com/kproxy/kproxy/filter"

// Chain lists the server's filters in the order a request passes them,
// each with its phase; a response passes them in reverse. It is complete
// once Start has registered them, and ends with the virtual cluster's
// name boundary when there is one (WithNameMapper).
func (s *Server) Chain() []filter.Link {
	chain := append([]filter.Link(nil), s.chain...)
	if s.names != nil {
		chain = append(chain, filter.Link{Phase: filter.PhaseNames, Filter: "tenant.Mapper"})
	}
	return chain
}
