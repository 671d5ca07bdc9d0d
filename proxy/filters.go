package proxy

import (
	"github.com/kproxy/kproxy/protocol"
	"github.com/kproxy/kproxy/rewrite"
)

// buildFilterTable indexes filters by the API keys they declare, keeping
// their order, so the data path finds a response's filters with one slice
// lookup and streams every key with no filters.
func buildFilterTable(filters ...rewrite.ResponseFilter) [][]rewrite.ResponseFilter {
	table := make([][]rewrite.ResponseFilter, protocol.MaxKnownKey()+1)
	for _, f := range filters {
		for _, key := range f.ResponseKeys() {
			if key >= 0 && int(key) < len(table) {
				table[key] = append(table[key], f)
			}
		}
	}
	return table
}

func (s *Server) filtersFor(key int16) []rewrite.ResponseFilter {
	if key < 0 || int(key) >= len(s.responseFilters) {
		return nil
	}
	return s.responseFilters[key]
}
