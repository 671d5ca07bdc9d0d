package engine

import (
	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// Option adds a feature to a Server.
type Option func(*Server)

// WithFilters adds filters to the chain (registered once, by Start), each
// in its phase (filter.PhaseOf: PhaseProgram unless it says otherwise),
// after the filters of that phase added earlier. Requests pass the phases
// from the client's side to the cluster's, responses back (Server.Chain
// lists the order). kproxy's quota engine and a virtual cluster's name
// mapper, among them, become the engine's own stages (stages.go).
func WithFilters(fs ...filter.Filter) Option {
	return func(s *Server) {
		for _, f := range fs {
			if !s.asStage(f) {
				s.filters = append(s.filters, f)
			}
		}
	}
}

// handlerTable indexes handlers by their API key, keeping their order, so
// the data path finds a message's handlers with one slice lookup and
// streams every key that has none.
type handlerTable[H any] [][]H

func buildHandlerTable[H any](keyOf func(H) int16, handlers []H) handlerTable[H] {
	table := make(handlerTable[H], wire.MaxKnownKey()+1)
	for _, h := range handlers {
		if key := keyOf(h); key >= 0 && int(key) < len(table) {
			table[key] = append(table[key], h)
		}
	}
	return table
}

func (t handlerTable[H]) lookup(key int16) []H {
	if key < 0 || int(key) >= len(t) {
		return nil
	}
	return t[key]
}

// empty reports whether no key has handlers.
func (t handlerTable[H]) empty() bool {
	for _, hs := range t {
		if len(hs) > 0 {
			return false
		}
	}
	return true
}

func requestKey(h filter.RequestHandler) int16   { return h.Key }
func responseKey(h filter.ResponseHandler) int16 { return h.Key }

// responseNeeds is, per API key and version, the most any response handler
// needs from that response, so the data path decides with two lookups.
type responseNeeds [][]filter.Need

func buildResponseNeeds(table handlerTable[filter.ResponseHandler]) responseNeeds {
	needs := make(responseNeeds, len(table))
	for key, handlers := range table {
		if len(handlers) == 0 {
			continue
		}
		maxV := protocol.MaxVersion(int16(key))
		needs[key] = make([]filter.Need, maxV+1)
		for v := int16(0); v <= maxV; v++ {
			for _, h := range handlers {
				need := filter.Decode
				if h.Need != nil {
					need = h.Need(v)
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

// responseFilters are one listener's response handlers, per API key, and
// what they need per key and version.
type responseFilters struct {
	handlers handlerTable[filter.ResponseHandler]
	needs    responseNeeds
}

func newResponseFilters(handlers []filter.ResponseHandler) responseFilters {
	table := buildHandlerTable(responseKey, handlers)
	return responseFilters{handlers: table, needs: buildResponseNeeds(table)}
}

// need is the most any handler needs from a response of key at version.
func (f *responseFilters) need(key, version int16) filter.Need {
	if key < 0 || int(key) >= len(f.needs) {
		return filter.Stream
	}
	byVersion := f.needs[key]
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
