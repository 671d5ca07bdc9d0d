package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// forwardResponses is the response loop: for each owed response, in the
// order the client asked, it writes kproxy's own answer or relays the
// upstream's, checking the correlation id. It returns nil once the request
// loop has stopped and every owed response is delivered; the request loop's
// reason then closes the pair.
func (p *pair) forwardResponses(down *direction) error {
	for {
		if down.r.Buffered() == 0 { // else the next response is already here
			if err := p.awaitUpstream(down); err != nil {
				return err
			}
		}
		var ok bool
		if p.delivering, ok = p.inflight.pop(); !ok {
			break
		}
		owed := &p.delivering
		p.observed = owed.timing // completed below and by relayResponse
		err := p.deliver(owed, down)
		if owed.hold.held() {
			p.s.holder.delivered(p, owed, err)
		}
		p.s.budget.release(&p.budget, owed.charged) // its hooks have run
		*owed = pending{}                           // keeps nothing of it alive
		if err != nil {
			return err
		}
		p.owed.Add(-1)
		p.s.metrics.inFlight.Dec()
		p.activity.Add(1)
		// Flush before anything that may block: waiting for the next owed
		// response, or for bytes of the next upstream frame.
		if p.inflight.len() == 0 || down.r.Buffered() < protocol.FrameSizeLen {
			if err := down.w.Flush(); err != nil {
				return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
			}
		}
		p.observeDelivered()
	}
	if err := down.w.Flush(); err != nil {
		return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
	}
	return nil // the request loop stopped and all it owed is delivered
}

// deliver writes the response owed to the client: kproxy's own answer,
// what a stage delivers, or the upstream's relayed.
func (p *pair) deliver(owed *pending, down *direction) error {
	switch {
	case owed.deliver != nil:
		return owed.deliver(p, *owed, down)
	case owed.local != nil:
		p.observed.ResponseBytes = len(owed.local)
		if owed.hold.held() {
			if handled, err := p.s.holder.deliverLocal(p, owed, down); handled || err != nil {
				return err
			}
		}
		if _, err := down.w.Write(owed.local); err != nil {
			return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
		}
		return nil
	}
	return p.relayResponse(owed, down)
}

// observeDelivered completes the timing of the response just delivered
// and hands it to the observers, unless it answered kproxy's own request.
func (p *pair) observeDelivered() {
	t := &p.observed
	if t.Start.IsZero() {
		return
	}
	t.Done = time.Now()
	if !t.Local && t.UpstreamFirstByte.IsZero() { // a stage delivered it: no earlier time known
		t.UpstreamFirstByte = t.Done
	}
	p.observe(t)
}

// relayResponse reads the upstream's response to owed and writes it to the
// client: streamed when no handler needs it, otherwise decoded once, passed
// through the handlers, and encoded once.
func (p *pair) relayResponse(owed *pending, down *direction) error {
	frameLen, err := p.responseFrameLen(*owed, down)
	if err != nil {
		return err
	}
	p.peekResponse(owed, down, frameLen)
	need := responseNeedAtBoundary(p.responseTable().need(owed.key, owed.version), owed)
	need = max(need, hookNeed(owed))
	var delay time.Duration
	if owed.hold.held() {
		var done bool
		if need, delay, done, err = p.s.holder.beforeRelay(p, owed, down, frameLen, need); done || err != nil {
			return err
		}
	}
	p.observed.ResponseBytes = frameLen // a re-encoding says otherwise
	p.noteCoordinatorError(owed, down, frameLen)
	switch need {
	case filter.DropTopLevelTags:
		return p.streamDroppingTags(*owed, down, frameLen)
	case filter.Stream:
		return streamResponse(down, frameLen)
	}
	return p.filterResponse(owed, down, frameLen, need, delay)
}

// responseFrameLen peeks at the size and correlation id of the response
// next in down, which must be owed's, and returns the frame's length,
// size prefix included.
func (p *pair) responseFrameLen(owed pending, down *direction) (int, error) {
	prefix, err := down.r.Peek(protocol.FrameSizeLen + 4)
	if err != nil {
		return 0, upstreamReadError(err)
	}
	p.observed.UpstreamFirstByte = time.Now() // or later, if it was read along with an earlier response
	size, err := protocol.ParseFrameSize(prefix, int32(p.s.cfg.Limits.MaxFrameBytes))
	if err != nil {
		return 0, fail(reasonProtocol, fmt.Errorf("upstream response: %w", err))
	}
	if corr, _ := protocol.ResponseCorrelationID(prefix[protocol.FrameSizeLen:]); corr != owed.correlationID {
		return 0, fail(reasonProtocol, fmt.Errorf("upstream response has correlation id %d, expected %d for %s v%d",
			corr, owed.correlationID, protocol.APIName(owed.key), owed.version))
	}
	return protocol.FrameSizeLen + int(size), nil
}

// streamResponse relays the response of frameLen bytes next in down as
// it arrives.
func streamResponse(down *direction, frameLen int) error {
	if err := down.stream(frameLen); err != nil {
		if errors.Is(err, errWriteSide) {
			return fail(reasonClientClosed, err)
		}
		return upstreamReadError(err)
	}
	return nil
}

// filterResponse buffers the response to owed, of frameLen bytes, and
// unless need is Inspect and neither owed's hook nor a handler wants it
// decoded, decodes it,
// passes it through the name boundary, owed's hook and the handlers, and
// writes its encoding with throttle (a holder's delay, when not zero)
// set. The frame, its
// decoding and its re-encoding are charged to limits.max_buffered_bytes
// before they are allocated; waiting here leaves the response in the
// upstream socket.
func (p *pair) filterResponse(owed *pending, down *direction, frameLen int, need filter.Need, throttle time.Duration) error {
	var charged int64
	defer func() { p.s.budget.release(&p.budget, charged) }()
	defer p.splicer.Reset()
	defer p.releaseResponse()
	frame, body, err := p.readResponse(owed, down, frameLen, &charged)
	if err != nil {
		return err
	}
	handlers := p.responseTable().handlers.lookup(owed.key)
	if need == filter.Inspect && !hookWantsBody(owed, body) && !inspectWants(handlers, owed.version, body) {
		p.countWalkedErrors(owed, body)
		return p.writeResponse(down, frame)
	}
	resp, err := p.decodeResponse(*owed, body, len(frame), &charged)
	if err != nil {
		return err
	}
	if err := p.runResponseHandlers(owed, resp, handlers); err != nil {
		return err
	}
	if fresh := freshRecords(resp, frame); fresh > 0 {
		// Records a handler copied (decrypted), held until written.
		if err := p.s.budget.acquire(&p.budget, int64(fresh), p.closed); err != nil {
			return fail(reasonClientClosed, err)
		}
		charged += int64(fresh)
	}
	if throttle > 0 {
		setDecodedThrottle(resp, throttle)
	}
	if av, ok := resp.(*kmsg.ApiVersionsResponse); ok && p.s.sec.terminatesSASL() && owed.onResponse == nil {
		p.s.apiVersions.store(p.nodeID, av) // what unauthenticated clients are told
	}
	p.observed.ErrorCode = topLevelErrorCode(resp)
	if len(p.splicer.Splices()) == 0 {
		if fields := freshRecordsFields(resp, frame); len(fields) > 0 {
			p.s.metrics.requests.countEntryErrors(resp)
			return p.writeRecordsInPlace(owed, down, resp, fields)
		}
	}
	if len(frame) > keepDecodeBuf {
		p.encodeBuf = p.large.encoding(&p.s.responseFrames, len(frame))
	} else if cap(p.encodeBuf) < len(frame) {
		// About the encoding's size (charged by decodeResponse): one
		// allocation, not a chain of appends copying it over and over.
		p.encodeBuf = make([]byte, 0, len(frame))
	}
	p.encodeBuf = protocol.AppendResponseFrame(p.encodeBuf[:0], owed.correlationID, resp)
	p.observed.ResponseBytes = len(p.encodeBuf)
	p.s.metrics.requests.countEntryErrors(resp)
	if splices := p.splicer.Splices(); len(splices) > 0 {
		return p.writeSpliced(owed, down, resp, splices)
	}
	return p.writeResponse(down, p.encodeBuf)
}

// readResponse reads the response frame of frameLen bytes from down,
// charging it to *charged, and returns it with its body, the name
// boundary's raw rewrite applied.
func (p *pair) readResponse(owed *pending, down *direction, frameLen int, charged *int64) (frame, body []byte, err error) {
	if err := p.s.budget.acquire(&p.budget, int64(frameLen), p.closed); err != nil {
		return nil, nil, fail(reasonClientClosed, err)
	}
	*charged += int64(frameLen)
	frame = p.decodeBuffer(frameLen)
	if _, err := io.ReadFull(down.r, frame); err != nil {
		return nil, nil, upstreamReadError(err)
	}
	body, err = wire.SkipResponseHeader(owed.key, owed.version, frame[protocol.FrameSizeLen:])
	if err != nil {
		return nil, nil, fail(reasonProtocol, fmt.Errorf("upstream %s response: %w", protocol.APIName(owed.key), err))
	}
	if owed.boundary.need != boundaryRaw {
		return frame, body, nil
	}
	if frame, body, err = p.s.boundary.mapRawResponse(p, owed, frame, body); err != nil {
		return nil, nil, err
	}
	if len(frame) > frameLen { // names grew: the rest is charged now
		if err := p.s.budget.acquire(&p.budget, int64(len(frame)-frameLen), p.closed); err != nil {
			return nil, nil, fail(reasonClientClosed, err)
		}
		*charged += int64(len(frame) - frameLen)
	}
	p.observed.ResponseBytes = len(frame)
	return frame, body, nil
}

// decodeResponse decodes body, the body of owed's response frame of
// frameLen bytes, charging its decoding and re-encoding to *charged.
func (p *pair) decodeResponse(owed pending, body []byte, frameLen int, charged *int64) (kmsg.Response, error) {
	decoded, err := wire.DecodedSize(owed.key, wire.ResponseBodyVersion(owed.key, owed.version, body), body, true)
	if err != nil {
		return nil, fail(reasonProtocol, fmt.Errorf("upstream response: %w", err))
	}
	if err := p.s.budget.acquire(&p.budget, int64(decoded-len(body)+frameLen), p.closed); err != nil {
		return nil, fail(reasonClientClosed, err)
	}
	*charged += int64(decoded - len(body) + frameLen)
	resp, err := protocol.DecodeResponse(owed.key, owed.version, body)
	if err != nil {
		return nil, fail(reasonProtocol, fmt.Errorf("upstream response: %w", err))
	}
	return resp, nil
}

// runResponseHandlers passes resp through the chain, from the cluster's
// side: the name boundary, owed's hook, then handlers.
func (p *pair) runResponseHandlers(owed *pending, resp kmsg.Response, handlers []filter.ResponseHandler) error {
	if owed.boundary.need == boundaryDecoded {
		if err := p.s.boundary.mapResponse(owed, resp); err != nil {
			return err
		}
	}
	if owed.onResponse != nil {
		if err := owed.onResponse(resp); err != nil {
			return fail(reasonFilter, err)
		}
	}
	for _, h := range handlers {
		release, err := h.Run(resp)
		if release != nil {
			p.responseReleases = append(p.responseReleases, release)
		}
		if err != nil {
			return fail(reasonRewrite, err)
		}
	}
	return nil
}

// releaseResponse calls the releases the handlers returned for the
// response just written or given up on: nothing reads it any more.
func (p *pair) releaseResponse() {
	for i, release := range p.responseReleases {
		release()
		p.responseReleases[i] = nil
	}
	p.responseReleases = p.responseReleases[:0]
}

// splicedHook makes hook a response hook that runs, in the response loop,
// with p's Splicer.
func splicedHook[R kmsg.Response](p *pair, hook func(R, *filter.Splicer) error) func(kmsg.Response) error {
	return filter.Then(func(resp R) error { return hook(resp, &p.splicer) })
}

// writeSpliced writes resp, encoded in p.encodeBuf, with the values its
// handlers spliced streamed in place of their placeholders.
func (p *pair) writeSpliced(owed *pending, down *direction, resp kmsg.Response, splices []filter.Splice) error {
	records, compact, ok := splicedPartitions(resp, owed.version)
	if !ok {
		return fail(reasonRewrite, fmt.Errorf("%w: values spliced into a %s response", errSpliceLayout, protocol.APIName(owed.key)))
	}
	pieces, size, err := planValueSplices(p.encodeBuf, compact, records, splices)
	if err != nil {
		return fail(reasonRewrite, err)
	}
	p.observed.ResponseBytes = int(size)
	return p.writeSplicedFrame(down, pieces)
}

// writeRecordsInPlace writes resp with the records in fields (a
// filter's, outside the frame read) written from where they are, not
// copied into its encoding (appendSplicedResponseFrame).
func (p *pair) writeRecordsInPlace(owed *pending, down *direction, resp kmsg.Response, fields []*[]byte) error {
	var err error
	p.encodeBuf, p.pieceScratch, p.responsePieces, err = appendSplicedResponseFrame(p.encodeBuf[:0], p.pieceScratch, owed.correlationID, resp, fields, p.responsePieces[:0])
	if err != nil {
		return fail(reasonRewrite, err)
	}
	p.observed.ResponseBytes = protocol.FrameSizeLen + int(binary.BigEndian.Uint32(p.encodeBuf))
	err = writeFrame(down.w, p.encodeBuf, p.responsePieces)
	clear(p.responsePieces) // the filter's buffers, released after this
	p.releaseBuffers()
	if err != nil {
		return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
	}
	return nil
}

// writeResponse writes a whole response frame to the client.
func (p *pair) writeResponse(down *direction, frame []byte) error {
	_, err := down.w.Write(frame)
	p.releaseBuffers()
	if err != nil {
		return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
	}
	return nil
}

func (p *pair) decodeBuffer(n int) []byte {
	if n > keepDecodeBuf {
		return p.large.frame(&p.s.responseFrames, n)
	}
	if cap(p.decodeBuf) < n {
		p.decodeBuf = make([]byte, n)
	}
	return p.decodeBuf[:n]
}

// releaseBuffers drops buffers grown for one unusually large response.
func (p *pair) releaseBuffers() {
	p.large.release(&p.s.responseFrames)
	if cap(p.decodeBuf) > keepDecodeBuf {
		p.decodeBuf = nil
	}
	if cap(p.encodeBuf) > keepDecodeBuf {
		p.encodeBuf = nil
	}
	if cap(p.mapBuf) > keepDecodeBuf {
		p.mapBuf = nil
	}
	if cap(p.pieceScratch) > keepDecodeBuf {
		p.pieceScratch = nil
	}
}

func upstreamReadError(err error) error {
	return fail(reasonUpstreamClosed, fmt.Errorf("read upstream: %w", err))
}
