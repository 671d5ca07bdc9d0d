package engine

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/tenant"
	"github.com/kproxy/kproxy/protocol"
)

// WithClusterOperators says which connections are the virtual cluster's
// cluster operators, whose requests to the APIs acting on the whole
// upstream cluster the name mapper lets through (everyone else's it
// answers with the API's authorization error). Without it, no one is.
func WithClusterOperators(isOperator func(*filter.Conn) bool) Option {
	return func(s *Server) { s.clusterOperator = isOperator }
}

// nameBoundary is the chain's boundary for a virtual cluster's names.
type nameBoundary struct{ m *tenant.Mapper }

func (nameBoundary) link() filter.Link {
	return filter.Link{Phase: filter.PhaseNames, Filter: "tenant.Mapper"}
}

func (b nameBoundary) requestNeed(key, version int16) boundaryNeed {
	return needAtBoundary(b.m.RequestNeed(key, version))
}

func (b nameBoundary) responseNeed(key, version int16) boundaryNeed {
	return needAtBoundary(b.m.ResponseNeed(key, version))
}

func (b nameBoundary) streams(key, version int16, bodyPrefix []byte) bool {
	return b.m.Streams(context.Background(), key, version, bodyPrefix)
}

// needAtBoundary is the mapper's need as the boundary's.
func needAtBoundary(n tenant.Need) boundaryNeed {
	switch n {
	case tenant.NeedRaw:
		return boundaryRaw
	case tenant.NeedDecoded:
		return boundaryDecoded
	}
	return boundaryNothing
}

// mapContext is the context the name mapper maps a request of key in: a
// cluster operator's when the mapping depends on it and the connection's
// principal is one (matched only then, and so only for those keys).
func (b nameBoundary) mapContext(p *pair, key int16) context.Context {
	ctx := context.Background()
	if p.s.clusterOperator != nil && b.m.NeedsOperator(key) && p.s.clusterOperator(&p.conn) {
		return tenant.AsClusterOperator(ctx)
	}
	return ctx
}

// mapRawRequest builds the upstream's frame of a request the name mapper
// rewrites raw: frame's size prefix and header, then the mapped body. nil:
// the frame needs no change (an idempotent produce by topic ids, say).
func (b nameBoundary) mapRawRequest(p *pair, h protocol.RequestHeader, frame []byte, owed *pending) (*[]byte, error) {
	body := frame[protocol.FrameSizeLen+h.Len:]
	out := p.s.frames.get(len(frame))
	head := append((*out)[:0], frame[:protocol.FrameSizeLen+h.Len]...)
	mapped, mapResponse, err := b.m.MapRawRequest(context.Background(), h.APIKey, h.APIVersion, body, head)
	if err != nil || mapped == nil {
		p.s.frames.put(out)
		if err != nil {
			return nil, p.nameMappingFailed(h, owed, err)
		}
		return nil, nil
	}
	*out = mapped
	binary.BigEndian.PutUint32(*out, uint32(len(*out)-protocol.FrameSizeLen))
	if mapResponse {
		owed.boundary.need = boundaryDecoded
	}
	return out, nil
}

// mapDecodedRequest maps req (decoded, after every filter) to the
// upstream's names. It returns the request to encode: req itself, or, when
// hooks keep req to read with the response (they must see the client's
// names), a fresh decoding of its encoding that is mapped instead.
func (b nameBoundary) mapDecodedRequest(p *pair, h protocol.RequestHeader, req kmsg.Request, hooks bool, decodeCopy func(kmsg.Request) (kmsg.Request, error), owed *pending) (kmsg.Request, error) {
	target := req
	if hooks {
		var err error
		if target, err = decodeCopy(req); err != nil {
			return nil, err
		}
	}
	mapResponse, err := b.m.MapRequest(b.mapContext(p, h.APIKey), target)
	if err != nil {
		return nil, p.nameMappingFailed(h, owed, err)
	}
	if mapResponse {
		owed.boundary.need = boundaryDecoded
	}
	if owed.boundary.need == boundaryDecoded {
		owed.boundary.req = target
	}
	return target, nil
}

// nameMappingFailed turns the name mapper's refusal into kproxy's answer
// (an Answer: owed.local) or the error that closes the connection.
func (p *pair) nameMappingFailed(h protocol.RequestHeader, owed *pending, err error) error {
	if a, ok := tenant.AsAnswer(err); ok {
		a.Response.SetVersion(h.APIVersion)
		p.answerLocally(owed, h.CorrelationID, a.Response)
		return nil
	}
	return fail(reasonFilter, fmt.Errorf("client %s v%d request: %w", protocol.APIName(h.APIKey), h.APIVersion, err))
}

// mapRawResponse rewrites the buffered response frame (size prefix and
// header, then body) to the tenant's names into p.mapBuf and returns the
// new frame and body (frame and body themselves when nothing changes).
func (b nameBoundary) mapRawResponse(p *pair, owed *pending, frame, body []byte) ([]byte, []byte, error) {
	head := len(frame) - len(body)
	out := append(p.mapBuf[:0], frame[:head]...)
	out, err := b.m.MapRawResponse(owed.key, owed.version, body, out)
	if err != nil {
		return nil, nil, fail(reasonRewrite, fmt.Errorf("upstream %s v%d response: %w", protocol.APIName(owed.key), owed.version, err))
	}
	if out == nil { // no change
		return frame, body, nil
	}
	binary.BigEndian.PutUint32(out, uint32(len(out)-protocol.FrameSizeLen))
	p.mapBuf = out
	return out, out[head:], nil
}

// mapResponse maps the decoded response to owed to the tenant's names.
func (b nameBoundary) mapResponse(owed *pending, resp kmsg.Response) error {
	if err := b.m.MapResponse(owed.boundary.req, resp); err != nil {
		return fail(reasonRewrite, fmt.Errorf("upstream %s v%d response: %w", protocol.APIName(owed.key), owed.version, err))
	}
	return nil
}
