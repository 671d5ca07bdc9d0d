package proxy

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/tenant"
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
		owed, ok := p.inflight.pop()
		if !ok {
			break
		}
		p.observed = owed.timing // completed below and by relayResponse
		var err error
		switch {
		case owed.deliver != nil:
			err = owed.deliver(p, owed, down)
		case owed.local != nil && owed.fetchQuota:
			p.observed.ResponseBytes = len(owed.local)
			err = p.writeThrottled(&owed, down, owed.local, owed.throttle)
		case owed.local != nil:
			p.observed.ResponseBytes = len(owed.local)
			if _, werr := down.w.Write(owed.local); werr != nil {
				err = fail(reasonClientClosed, fmt.Errorf("write client: %w", werr))
			}
		default:
			err = p.relayResponse(owed, down)
		}
		if owed.fetchQuota {
			p.fetchDelivered()
		}
		p.s.budget.release(&p.budget, owed.charged) // its hooks have run
		if err != nil {
			return err
		}
		if owed.quota != nil {
			p.recordResponseTime(&owed, time.Now())
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
		if t := &p.observed; !t.Start.IsZero() { // a client request, not kproxy's own
			t.Done = time.Now()
			if !t.Local && t.UpstreamFirstByte.IsZero() { // a stage delivered it: no earlier time known
				t.UpstreamFirstByte = t.Done
			}
			p.observe(t)
		}
	}
	if err := down.w.Flush(); err != nil {
		return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
	}
	return nil // the request loop stopped and all it owed is delivered
}

// relayResponse reads the upstream's response to owed and writes it to the
// client: streamed when no handler needs it, otherwise decoded once, passed
// through the handlers, and encoded once.
func (p *pair) relayResponse(owed pending, down *direction) error {
	prefix, err := down.r.Peek(protocol.FrameSizeLen + 4)
	if err != nil {
		return upstreamReadError(err)
	}
	p.observed.UpstreamFirstByte = time.Now() // or later, if it was read along with an earlier response
	size, err := protocol.ParseFrameSize(prefix, int32(p.s.cfg.Limits.MaxFrameBytes))
	if err != nil {
		return fail(reasonProtocol, fmt.Errorf("upstream response: %w", err))
	}
	corr, _ := protocol.ResponseCorrelationID(prefix[protocol.FrameSizeLen:])
	if corr != owed.correlationID {
		return fail(reasonProtocol, fmt.Errorf("upstream response has correlation id %d, expected %d for %s v%d",
			corr, owed.correlationID, protocol.APIName(owed.key), owed.version))
	}
	frameLen := protocol.FrameSizeLen + int(size)
	if owed.learnFetchSession {
		p.learnFetchSession(&owed, down, frameLen)
	} else if owed.learnShareSession != "" {
		p.learnShareSession(&owed, down, frameLen)
	}

	need := responseNeedWithNames(p.responseTable().need(owed.key, owed.version), owed)
	if owed.onResponse != nil {
		need = filter.Decode
	}
	var throttle time.Duration
	if owed.fetchQuota {
		if replaced, err := p.chargeFetchResponse(&owed, down, frameLen); replaced || err != nil {
			return err
		}
	}
	if owed.quota != nil {
		if throttle, err = p.throttleResponse(&owed, down, frameLen); err != nil {
			return err
		}
		switch {
		case throttle == 0:
		case owed.key == wire.FetchKey && setFetchThrottle(down, owed.version, frameLen, throttle):
		case owed.key == wire.ProduceKey && owed.version >= 1 && need == filter.Stream:
			return p.relayThrottledProduce(&owed, down, frameLen, throttle)
		default:
			need = filter.Decode // rare: set throttle_time_ms in the decoded response
		}
	}
	p.observed.ResponseBytes = frameLen // a re-encoding below says otherwise
	p.noteCoordinatorError(&owed, down, frameLen)
	if need == filter.DropTopLevelTags {
		return p.streamDroppingTags(owed, down, frameLen)
	}
	if need == filter.Stream {
		if err := down.stream(frameLen); err != nil {
			if errors.Is(err, errWriteSide) {
				return fail(reasonClientClosed, err)
			}
			return upstreamReadError(err)
		}
		return nil
	}

	// The frame, its decoding and its re-encoding are charged to
	// limits.max_buffered_bytes before they are allocated; waiting here
	// leaves the response in the upstream socket.
	var charged int64
	defer func() { p.s.budget.release(&p.budget, charged) }()
	if err := p.s.budget.acquire(&p.budget, int64(frameLen), p.closed); err != nil {
		return fail(reasonClientClosed, err)
	}
	charged = int64(frameLen)
	frame := p.decodeBuffer(frameLen)
	if _, err := io.ReadFull(down.r, frame); err != nil {
		return upstreamReadError(err)
	}
	body, err := wire.SkipResponseHeader(owed.key, owed.version, frame[protocol.FrameSizeLen:])
	if err != nil {
		return fail(reasonProtocol, fmt.Errorf("upstream %s response: %w", protocol.APIName(owed.key), err))
	}
	if owed.mapNeed == tenant.NeedRaw {
		if frame, body, err = p.mapRawResponse(owed, frame, body); err != nil {
			return err
		}
		if len(frame) > frameLen { // names grew: the rest is charged now
			if err := p.s.budget.acquire(&p.budget, int64(len(frame)-frameLen), p.closed); err != nil {
				return fail(reasonClientClosed, err)
			}
			charged += int64(len(frame) - frameLen)
		}
		p.observed.ResponseBytes = len(frame)
		frameLen = len(frame)
	}
	handlers := p.responseTable().handlers.lookup(owed.key)
	if need == filter.Inspect && !inspectWants(handlers, owed.version, body) {
		_, err := down.w.Write(frame)
		p.releaseBuffers()
		if err != nil {
			return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
		}
		return nil
	}

	decoded, err := wire.DecodedSize(owed.key, wire.ResponseBodyVersion(owed.key, owed.version, body), body, true)
	if err != nil {
		return fail(reasonProtocol, fmt.Errorf("upstream response: %w", err))
	}
	if err := p.s.budget.acquire(&p.budget, int64(decoded-len(body)+frameLen), p.closed); err != nil {
		return fail(reasonClientClosed, err)
	}
	charged += int64(decoded - len(body) + frameLen)
	resp, err := protocol.DecodeResponse(owed.key, owed.version, body)
	if err != nil {
		return fail(reasonProtocol, fmt.Errorf("upstream response: %w", err))
	}
	if owed.mapNeed == tenant.NeedDecoded {
		if err := p.s.names.MapResponse(owed.mappedReq, resp); err != nil {
			return fail(reasonRewrite, fmt.Errorf("upstream %s v%d response: %w", protocol.APIName(owed.key), owed.version, err))
		}
	}
	if owed.onResponse != nil {
		if err := owed.onResponse(resp); err != nil {
			return fail(reasonFilter, err)
		}
	}
	for _, h := range handlers {
		if err := h.Handle(resp); err != nil {
			return fail(reasonRewrite, err)
		}
	}
	if throttle > 0 {
		setDecodedThrottle(resp, throttle)
	}
	if av, ok := resp.(*kmsg.ApiVersionsResponse); ok && p.s.sec.terminatesSASL() && owed.onResponse == nil {
		p.s.apiVersions.store(p.nodeID, av) // what unauthenticated clients are told
	}
	p.encodeBuf = protocol.AppendResponseFrame(p.encodeBuf[:0], corr, resp)
	p.observed.ResponseBytes, p.observed.ErrorCode = len(p.encodeBuf), topLevelErrorCode(resp)
	_, err = down.w.Write(p.encodeBuf)
	p.releaseBuffers()
	if err != nil {
		return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
	}
	return nil
}

func (p *pair) decodeBuffer(n int) []byte {
	if cap(p.decodeBuf) < n {
		p.decodeBuf = make([]byte, n)
	}
	return p.decodeBuf[:n]
}

// releaseBuffers drops buffers grown for one unusually large response.
func (p *pair) releaseBuffers() {
	if cap(p.decodeBuf) > keepDecodeBuf {
		p.decodeBuf = nil
	}
	if cap(p.encodeBuf) > keepDecodeBuf {
		p.encodeBuf = nil
	}
	if cap(p.mapBuf) > keepDecodeBuf {
		p.mapBuf = nil
	}
}

func upstreamReadError(err error) error {
	return fail(reasonUpstreamClosed, fmt.Errorf("read upstream: %w", err))
}
