package engine

import (
	"bufio"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// requestCharge is the memory budget a request read whole holds: until
// it is written upstream, and until its response is handled (when a hook
// reads the decoded request then).
type requestCharge struct{ afterWrite, afterResponse int64 }

// wholeRequest is a request frame read whole while it passes the chain.
type wholeRequest struct {
	h        protocol.RequestHeader
	frameLen int
	buf      *[]byte // the frame's pooled buffer
	body     []byte  // the frame after the request header
	// req is the decoding, once a handler needed it; modified says a
	// handler or the name boundary changed it.
	req      kmsg.Request
	modified bool
	records  int // producedRecords of req as decoded, before the handlers
	hooks    []func(kmsg.Response) error
	releases []func() // the handlers' Verdict.Release
	inspect  hookInspection
	charge   requestCharge
}

// filterRequest reads the whole request frame from cr and passes it
// through handlers, in order: as raw bytes to one with filter.DecideRaw
// while nothing decoded it yet, else decoded (once, for the first handler
// that needs it); then, as mapNeed says, through the name mapper (raw
// while nothing decoded it, else decoded). It returns the frame to forward
// (the original bytes, or a re-encoding if a handler or the mapper changed
// the request) and fills in owed: a local answer, or a hook for the
// upstream's response. The caller must not read the frame from cr
// again, and gives recycle (when not nil) back to the frame pool once the
// frame is written.
//
// The frame (as its bytes arrive), its decoding, the name mapper's copy
// and a re-encoding are each charged to limits.max_buffered_bytes (waiting
// for room) before they are allocated, the copy of a changed request
// right after it is encoded; the caller releases charge, also when err is
// set.
//
// A re-encoded Produce request's frame may leave the records the handlers
// put into it to tail.pieces, written in place (writeFrame); the handlers'
// Verdict.Release go to tail.releases when nothing reads the request after
// it is written.
func (p *pair) filterRequest(h protocol.RequestHeader, cr *bufio.Reader, frameLen int, owed *pending, handlers []filter.RequestHandler, mapNeed boundaryNeed, tail *requestTail) (frame []byte, recycle *[]byte, charge requestCharge, err error) {
	// w lives in the pair, which the closure below reaches anyway: a
	// local would move to the heap.
	p.whole = wholeRequest{h: h, frameLen: frameLen, buf: p.s.frames.get(frameLen)}
	w := &p.whole
	defer func() { p.whole = wholeRequest{} }() // keeps nothing of it alive
	if *w.buf, err = readFrameReserving(*w.buf, cr, frameLen, func(n int) error { return p.reserve(&p.whole, n) }); err != nil {
		return nil, nil, w.charge, err
	}
	frame = *w.buf
	w.body = frame[protocol.FrameSizeLen+h.Len:]
	if answered, err := p.runRequestHandlers(w, owed, handlers); answered || err != nil {
		return frame, w.buf, w.charge, err
	}
	if mapNeed == boundaryRaw && w.req == nil {
		return p.mapRawAtBoundary(w, frame, owed)
	}
	if mapNeed != boundaryNothing {
		if err := p.mapDecodedAtBoundary(w, owed); err != nil || owed.local != nil {
			return frame, w.buf, w.charge, err
		}
	}
	joinHooks(owed, w.hooks)
	w.inspect.joinInto(owed)
	if len(w.hooks) > 0 || owed.boundary.req != nil {
		// The decoded request aliases buf and a hook (or the name mapper)
		// may read it when the response comes: buf stays with it, for the
		// collector, and so does its charge.
		w.buf = nil
		w.charge.afterResponse, w.charge.afterWrite = w.charge.afterWrite, 0
	}
	if w.modified {
		if len(w.hooks) == 0 && owed.boundary.req == nil {
			// Nothing reads the request once it is written: the
			// handlers may then reuse what they put into it.
			tail.releases = w.releases
		}
		return p.encodeFiltered(w, tail)
	}
	return frame, w.buf, w.charge, nil
}

// reserve charges n bytes for w to limits.max_buffered_bytes, waiting
// for room.
func (p *pair) reserve(w *wholeRequest, n int) error {
	if err := p.s.budget.acquire(&p.budget, int64(n), p.closed); err != nil {
		return fail(reasonClientClosed, err)
	}
	w.charge.afterWrite += int64(n)
	return nil
}

// decodeRequestBody decodes body as w's request, charging first what
// decoding allocates beyond body.
func (p *pair) decodeRequestBody(w *wholeRequest, body []byte) (kmsg.Request, error) {
	decoded, err := wire.DecodedSize(w.h.APIKey, w.h.APIVersion, body, false)
	if err != nil {
		return nil, fail(reasonProtocol, fmt.Errorf("client request: %w", err))
	}
	if err := p.reserve(w, decoded-len(body)); err != nil {
		return nil, err
	}
	req, err := protocol.DecodeRequest(w.h.APIKey, w.h.APIVersion, body)
	if err != nil {
		return nil, fail(reasonProtocol, fmt.Errorf("client request: %w", err))
	}
	w.records, _ = producedRecords(req)
	return req, nil
}

// decoded makes sure w's request is decoded.
func (p *pair) decoded(w *wholeRequest) error {
	if w.req != nil {
		return nil
	}
	var err error
	w.req, err = p.decodeRequestBody(w, w.body)
	return err
}

// runRequestHandlers passes w through handlers, in order, until one
// answers it (answered, owed.local set) or closes the connection (err).
func (p *pair) runRequestHandlers(w *wholeRequest, owed *pending, handlers []filter.RequestHandler) (answered bool, err error) {
	for _, handler := range handlers {
		v, decided := filter.Verdict{}, false
		if w.req == nil {
			v, decided = p.decideRaw(handler, w.h, w.body)
		}
		if !decided {
			if err := p.decoded(w); err != nil {
				return false, err
			}
			v = handler.Handle(&p.conn, w.req)
		}
		if v.Close != nil {
			return false, fail(reasonFilter, v.Close)
		}
		if v.Respond != nil {
			p.answerLocally(owed, w.h.CorrelationID, v.Respond)
			return true, nil
		}
		w.modified = w.modified || v.Modified
		if v.Release != nil {
			w.releases = append(w.releases, v.Release)
		}
		if v.OnResponse != nil || v.OnFetchSpliced != nil || v.OnShareFetchSpliced != nil {
			w.inspect.add(v)
		}
		if v.OnResponse != nil {
			w.hooks = append(w.hooks, v.OnResponse)
		}
		if v.OnFetchSpliced != nil {
			w.hooks = append(w.hooks, splicedHook(p, v.OnFetchSpliced))
		}
		if v.OnShareFetchSpliced != nil {
			w.hooks = append(w.hooks, splicedHook(p, v.OnShareFetchSpliced))
		}
	}
	return false, nil
}

// mapRawAtBoundary maps w, which nothing decoded (so nothing changed and
// no hook holds), raw at the name boundary and returns the frame to
// forward.
func (p *pair) mapRawAtBoundary(w *wholeRequest, frame []byte, owed *pending) ([]byte, *[]byte, requestCharge, error) {
	if err := p.reserve(w, w.frameLen); err != nil {
		return nil, nil, w.charge, err
	}
	out, err := p.s.boundary.mapRawRequest(p, w.h, frame, owed)
	if err != nil || owed.local != nil || out == nil {
		return frame, w.buf, w.charge, err
	}
	p.s.frames.put(w.buf)
	return *out, out, w.charge, nil
}

// mapDecodedAtBoundary maps w's decoded request at the name boundary,
// after every filter. A request hooks keep is mapped in a copy: the hooks
// read the client's names.
func (p *pair) mapDecodedAtBoundary(w *wholeRequest, owed *pending) error {
	if err := p.decoded(w); err != nil {
		return err
	}
	copyForMapper := func(filtered kmsg.Request) (kmsg.Request, error) {
		if !w.modified {
			return p.decodeRequestBody(w, w.body)
		}
		// A filter changed it: the copy is decoded from its encoding,
		// which the copy aliases (record batches) and so holds as long as
		// the frame. Its size is known only once encoded.
		encoded := filtered.AppendTo(nil)
		if err := p.reserve(w, len(encoded)); err != nil {
			return nil, err
		}
		return p.decodeRequestBody(w, encoded)
	}
	mapped, err := p.s.boundary.mapDecodedRequest(p, w.h, w.req, len(w.hooks) > 0, copyForMapper, owed)
	if err != nil || owed.local != nil {
		return err
	}
	w.req, w.modified = mapped, true
	return nil
}

// joinHooks makes hooks owed's one response hook, run in order.
func joinHooks(owed *pending, hooks []func(kmsg.Response) error) {
	switch len(hooks) {
	case 0:
	case 1:
		owed.onResponse = hooks[0]
	default:
		owed.onResponse = func(resp kmsg.Response) error {
			for _, hook := range hooks {
				if err := hook(resp); err != nil {
					return err
				}
			}
			return nil
		}
	}
}

// encodeFiltered encodes w's changed request into a frame of its own,
// charged at the original frame's size plus what the handlers added to
// its records (encodedSizeHint), or at its size if that is more; the
// records the handlers copied (freshRecords) are charged with it. A
// Produce request's large fresh records are not copied into the frame
// but left to tail.pieces (appendProduceFrame), and the frame is that
// much smaller.
func (p *pair) encodeFiltered(w *wholeRequest, tail *requestTail) ([]byte, *[]byte, requestCharge, error) {
	produce, _ := w.req.(*kmsg.ProduceRequest)
	if produce != nil && produce.Version > maxSplicedProduce {
		produce = nil
	}
	size := encodedSizeHint(w)
	if produce != nil {
		size -= splicedBytes(produce, w.body)
	}
	if err := p.reserve(w, size+freshRecords(w.req, w.body)); err != nil {
		return nil, nil, w.charge, err
	}
	var out *[]byte
	if size < eagerFrameAlloc {
		// A frame whose records are spliced in: its own small buffer,
		// not the idle one of a whole frame, which the next read needs.
		out = new([]byte)
	} else {
		out = p.s.frames.get(size)
	}
	if cap(*out) < size {
		*out = make([]byte, 0, size)
	}
	w.h.ClientID = p.conn.ClientID
	if produce != nil {
		*out, tail.pieces = appendProduceFrame(*out, w.h, produce, w.body, tail.pieces[:0])
	} else {
		*out = protocol.AppendRequestFrame(*out, w.h, w.req)
	}
	if grown := len(*out) - size; grown > 0 {
		// Larger than the hint after all: charged now that it is known.
		if err := p.reserve(w, grown); err != nil {
			return nil, nil, w.charge, err
		}
	}
	p.s.frames.put(w.buf) // only now: req, just encoded, aliases it
	return *out, out, w.charge, nil
}
