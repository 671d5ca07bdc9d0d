package proxy

import (
	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/protocol"
)

// Option adds a feature to a Server.
type Option func(*Server)

// WithRequestFilters adds request filters, run in the order given after
// those added earlier.
func WithRequestFilters(fs ...filter.RequestFilter) Option {
	return func(s *Server) { s.extraRequestFilters = append(s.extraRequestFilters, fs...) }
}

// WithResponseFilters adds response filters, run after the built-in
// ApiVersions clamp and before address rewriting (which must see every
// address a filter may add).
func WithResponseFilters(fs ...filter.ResponseFilter) Option {
	return func(s *Server) { s.extraResponseFilters = append(s.extraResponseFilters, fs...) }
}

// filterTable indexes filters by the API keys they declare, keeping their
// order, so the data path finds a message's filters with one slice lookup
// and streams every key that has none.
type filterTable[F any] [][]F

func buildFilterTable[F any](keysOf func(F) []int16, filters ...F) filterTable[F] {
	table := make(filterTable[F], protocol.MaxKnownKey()+1)
	for _, f := range filters {
		for _, key := range keysOf(f) {
			if key >= 0 && int(key) < len(table) {
				table[key] = append(table[key], f)
			}
		}
	}
	return table
}

func (t filterTable[F]) lookup(key int16) []F {
	if key < 0 || int(key) >= len(t) {
		return nil
	}
	return t[key]
}

// responseNeeds is, per API key and version, the most any response filter
// needs from that response, so the data path decides with two lookups.
type responseNeeds [][]filter.Need

func buildResponseNeeds(table filterTable[filter.ResponseFilter]) responseNeeds {
	needs := make(responseNeeds, len(table))
	for key, filters := range table {
		if len(filters) == 0 {
			continue
		}
		maxV := protocol.MaxVersion(int16(key))
		needs[key] = make([]filter.Need, maxV+1)
		for v := int16(0); v <= maxV; v++ {
			for _, f := range filters {
				need := filter.Decode
				if sel, ok := f.(filter.ResponseSelector); ok {
					need = sel.ResponseNeed(int16(key), v)
				}
				if need == filter.DropTopLevelTags && !canDropTags(int16(key), v) {
					need = filter.Decode
				}
				needs[key][v] = max(needs[key][v], need)
			}
		}
	}
	return needs
}

func (s *Server) responseNeed(key, version int16) filter.Need {
	if key < 0 || int(key) >= len(s.responseNeeds) {
		return filter.Stream
	}
	byVersion := s.responseNeeds[key]
	if version < 0 || int(version) >= len(byVersion) {
		if len(byVersion) == 0 {
			return filter.Stream
		}
		return filter.Decode
	}
	return byVersion[version]
}

// canDropTags says whether the engine can stream version of key while
// dropping its top-level tags: the API table has a walk to them, and the
// version is flexible (has tags at all).
func canDropTags(key, version int16) bool {
	api, ok := protocol.APIs().API(key)
	return ok && api.WalkToTags != nil && protocol.IsFlexible(key, version)
}
