package engine

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/protocol"
)

// boundary is the chain's stage next to the cluster (filter.PhaseNames):
// it rewrites a request after every request filter, just before it is
// encoded for the upstream, and its response right after it is read,
// before any hook or response filter (names.go: a virtual cluster's
// names). Keys and versions it needs nothing of stay streamed; those it
// rewrites raw are buffered and rewritten without decoding; the rest are
// decoded once, for it and the filters together.
type boundary interface {
	// link is the boundary as Server.Chain lists it.
	link() filter.Link
	// requestNeed and responseNeed are what it needs of a request, and of
	// every response, of key at version.
	requestNeed(key, version int16) boundaryNeed
	responseNeed(key, version int16) boundaryNeed
	// streams reports that the request, whose body starts with
	// bodyPrefix, has nothing to rewrite.
	streams(key, version int16, bodyPrefix []byte) bool
	// mapRawRequest builds the upstream's frame of a request rewritten
	// raw (nil: frame needs no change), or answers it (owed.local).
	mapRawRequest(p *pair, h protocol.RequestHeader, frame []byte, owed *pending) (*[]byte, error)
	// mapDecodedRequest rewrites req, or, when hooks keep req to read
	// with the response, a copy (decodeCopy) it returns; or answers it
	// (owed.local).
	mapDecodedRequest(p *pair, h protocol.RequestHeader, req kmsg.Request, hooks bool, decodeCopy func(kmsg.Request) (kmsg.Request, error), owed *pending) (kmsg.Request, error)
	// mapRawResponse rewrites the buffered response frame (and its body);
	// mapResponse the decoded response.
	mapRawResponse(p *pair, owed *pending, frame, body []byte) ([]byte, []byte, error)
	mapResponse(owed *pending, resp kmsg.Response) error
}

// boundaryNeed is how much of a message the boundary needs.
type boundaryNeed uint8

const (
	boundaryNothing boundaryNeed = iota
	boundaryRaw                  // buffered, rewritten without decoding
	boundaryDecoded
)

// boundaryState is what the boundary needs of one response: need, and
// the request as sent upstream when it needs the response decoded.
type boundaryState struct {
	need boundaryNeed
	req  kmsg.Request
}

// responseNeedAtBoundary raises need to what the boundary needs of the
// response owed: decoded, or at least buffered for a raw rewrite.
func responseNeedAtBoundary(need filter.Need, owed *pending) filter.Need {
	switch owed.boundary.need {
	case boundaryDecoded:
		return filter.Decode
	case boundaryRaw:
		return max(need, filter.Inspect)
	}
	return need
}

// boundaryNeeds is what s's boundary needs of a request of key at
// version, and of its response; nothing without a boundary.
func (s *Server) boundaryNeeds(key, version int16) (request, response boundaryNeed) {
	if s.boundary == nil {
		return boundaryNothing, boundaryNothing
	}
	return s.boundary.requestNeed(key, version), s.boundary.responseNeed(key, version)
}
