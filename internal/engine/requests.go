package engine

import (
	"bufio"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// forwardRequests is the request loop. Each client frame goes through the
// stages in turn: framing (nextFrame), the auth stage (a raw SASL token,
// then the request's own rules), the response it is owed, the request
// filters, and forward, which answers it, queues its response and relays
// it. It returns why it stopped.
func (p *pair) forwardRequests(responses *sync.WaitGroup) error {
	cr := bufio.NewReaderSize(clientReader{p}, readBufSize)
	var up *direction // client to upstream, once connected
	var held int64    // memory budget charged for the request in hand
	defer func() { p.s.budget.release(&p.budget, held) }()
	for {
		frameLen, err := p.nextFrame(cr, up)
		if err != nil {
			return err
		}
		start := time.Now()
		p.requestStart = time.Time{} // a raw SASL token is not a request to observe
		token, isToken, err := p.auth.token(cr, frameLen)
		if err == nil && isToken {
			err = p.forward(cr, &up, responses, token, &held)
		}
		if err != nil {
			return err
		}
		if isToken {
			continue
		}
		p.requestStart = start
		h, clientID, bodyPrefix, req, err := p.readRequest(cr, frameLen)
		if err != nil {
			return err
		}
		if p.session.expired() {
			return p.upstreamSessionExpired()
		}
		r := &p.request // the stages reach it by pointer: a local would move to the heap
		*r = req
		if err := p.runRawStages(h, bodyPrefix, r); err != nil {
			return err
		}
		if err := p.filterStage(h, clientID, bodyPrefix, cr, r, &held); err != nil {
			return err
		}
		if err := p.holdRequest(r, cr, up); err != nil {
			return err
		}
		if err := p.forward(cr, &up, responses, *r, &held); err != nil {
			return err
		}
		if r.owed.hold.held() {
			p.s.holder.forwarded(p, r)
		}
		*r = clientRequest{} // keeps nothing of it alive
	}
}

// readRequest reads the header of the request frame of frameLen bytes at
// the front of cr, says which response it is owed, and passes it through
// the auth stage. clientID and bodyPrefix are requestHeader's.
func (p *pair) readRequest(cr *bufio.Reader, frameLen int) (h protocol.RequestHeader, clientID, bodyPrefix []byte, r clientRequest, err error) {
	h, clientID, bodyPrefix, err = p.requestHeader(cr, frameLen)
	if err != nil {
		return h, nil, nil, r, err
	}
	owed, expected, err := p.responseOwed(h, bodyPrefix)
	if err != nil {
		return h, nil, nil, r, err
	}
	p.s.sample(&owed.timing, h, bodyPrefix)
	r, err = p.auth.request(h, cr, clientRequest{frameLen: frameLen, owed: owed, expected: expected})
	return h, clientID, bodyPrefix, r, err
}

// filterStage runs the request handlers of h's key, then the chain's
// boundary, over r, unless a stage already answered it or read it whole;
// bodyPrefix (what cr buffers of the body) lets the boundary say it has
// nothing to rewrite. held is set to the memory budget the request then
// holds, also when err is set.
func (p *pair) filterStage(h protocol.RequestHeader, clientID, bodyPrefix []byte, cr *bufio.Reader, r *clientRequest, held *int64) error {
	if r.owed.local != nil || r.frame != nil {
		return nil
	}
	handlers := p.s.requestHandlers.lookup(h.APIKey)
	mapNeed, responseNeed := p.s.boundaryNeeds(h.APIKey, h.APIVersion)
	r.owed.boundary.need = responseNeed
	if len(handlers) == 0 && mapNeed != boundaryNothing && p.s.boundary.streams(h.APIKey, h.APIVersion, bodyPrefix) {
		mapNeed = boundaryNothing // nothing to map: keep it streamed
	}
	if len(handlers) == 0 && mapNeed == boundaryNothing {
		return nil
	}
	var err error
	r.frame, r.recycle, r.charge, err = p.filterRequest(h, cr, r.frameLen, &r.owed, handlers, mapNeed, &r.tail)
	*held = r.charge.afterWrite + r.charge.afterResponse
	if err != nil {
		return err
	}
	if !r.expected && r.owed.local != nil {
		// No response can carry the refusal: close, as a broker does for
		// a failed acks=0 produce.
		return fail(reasonFilter, errors.New("acks=0 produce refused by a filter"))
	}
	return nil
}

// nextFrame waits for the client's next frame and returns its length,
// size prefix included, once the prefix is in cr. Between frames, where
// nothing is half-written upstream, it re-authenticates kproxy's upstream
// session when that is due.
func (p *pair) nextFrame(cr *bufio.Reader, up *direction) (int, error) {
	for {
		if p.mutedUntil.Load() != 0 {
			if err := p.waitMuted(); err != nil {
				return 0, err
			}
		}
		if up != nil && p.session.reauthDue() {
			if err := p.reauthenticateUpstream(up); err != nil {
				return 0, err
			}
		}
		p.atBoundary.Store(true)
		prefix, err := cr.Peek(protocol.FrameSizeLen)
		if errors.Is(err, errReauthDue) {
			continue
		}
		if err != nil {
			return 0, clientReadError(err)
		}
		p.atBoundary.Store(false)
		size, err := protocol.ParseFrameSize(prefix, p.auth.frameLimit(int32(p.s.cfg.Limits.MaxFrameBytes)))
		if err != nil {
			return 0, fail(reasonProtocol, fmt.Errorf("client request: %w", err))
		}
		return protocol.FrameSizeLen + int(size), nil
	}
}

// requestHeader parses the header of the request frame of frameLen bytes
// at the front of cr, which stays unread, and counts the request. The
// client id and bodyPrefix (as much of the body as cr buffers) alias cr's
// buffer: they are valid until cr is read.
func (p *pair) requestHeader(cr *bufio.Reader, frameLen int) (h protocol.RequestHeader, clientID, bodyPrefix []byte, err error) {
	head, err := cr.Peek(min(frameLen, cr.Size()))
	if err != nil {
		return h, nil, nil, clientReadError(err)
	}
	h, clientID, err = protocol.PeekRequestHeader(head[protocol.FrameSizeLen:])
	if err != nil {
		if errors.Is(err, protocol.ErrShortBuffer) && len(head) < frameLen {
			err = fmt.Errorf("request header longer than %d bytes: %w", cr.Size(), err)
		}
		return h, nil, nil, fail(reasonProtocol, fmt.Errorf("client request: %w", err))
	}
	p.s.metrics.countRequest(h.APIKey, h.APIVersion)
	if string(clientID) != p.conn.ClientID { // allocates only when it changed
		id := string(clientID)
		p.conn.ClientID = id
		p.clientID.Store(&id)
	}
	p.activity.Add(1)
	return h, clientID, head[protocol.FrameSizeLen+h.Len:], nil
}

// clientRequest is one client frame once the stages have decided about
// it, ready for forward.
type clientRequest struct {
	frameLen int
	owed     pending
	// expected is false for a request that gets no response (Produce with
	// acks=0).
	expected bool
	// frame is the whole frame when a stage had to read it; nil: it is
	// still in the client reader, to stream.
	frame []byte
	// recycle is frame's pooled buffer, given back once it is written.
	recycle *[]byte
	// tail is the records written in frame's place, and what to release
	// once it is written.
	tail requestTail
	// charge is the memory budget held for it (the request loop's held).
	charge requestCharge
	// closeAfter, when set, ends the pair once owed.local is delivered:
	// the client must read why before the connection ends.
	closeAfter error
}

// forward hands r on. kproxy's own answer goes straight to the client
// while no upstream is connected, nothing else being owed. Otherwise the
// upstream is dialled if need be (here only, for the first request that
// must reach it: in SASL terminate mode never before the client
// authenticated), the response owed is queued before the request is
// written, so that it can never arrive first, and the frame is relayed or,
// when kproxy answers it, dropped. held is the budget the request loop
// holds for r: forward releases it, or leaves what is not released yet
// when it fails.
func (p *pair) forward(cr *bufio.Reader, up **direction, responses *sync.WaitGroup, r clientRequest, held *int64) error {
	p.startTiming(&r)
	if *up == nil && r.owed.local != nil {
		if err := discardUnread(cr, r); err != nil {
			return err
		}
		p.releaseRequest(r, held)
		if err := p.answerDirect(r.owed.local); err != nil {
			return err
		}
		p.observeOnRequestLoop(&r.owed.timing, len(r.owed.local))
		return r.closeAfter
	}
	if *up == nil {
		var err error
		if *up, err = p.connect(cr, responses); err != nil {
			return err
		}
	}
	if r.owed.local == nil {
		r.owed.timing.SentUpstream = time.Now()
	}
	if r.expected {
		r.owed.charged = r.charge.afterResponse
		if r.closeAfter != nil {
			r.owed.deliver = closeAfterAnswer(r.closeAfter)
		}
		if err := p.owe(r.owed); err != nil {
			return err
		}
		*held -= r.charge.afterResponse // the response loop releases it
		if r.closeAfter != nil {
			return failAfterDelivery(reasonAuth, r.closeAfter)
		}
	}
	if err := p.relay(cr, *up, r); err != nil {
		return err
	}
	p.releaseRequest(r, held)
	if err := flushIfIdle(cr, *up); err != nil {
		return err
	}
	if !r.expected {
		p.observeOnRequestLoop(&r.owed.timing, 0)
	}
	return nil
}

// startTiming counts r's bytes and fills in what the request loop knows
// of its timing, unless it is not a client request to observe (a raw SASL
// token).
func (p *pair) startTiming(r *clientRequest) {
	p.received.Add(int64(r.frameLen))
	p.bytesIn.Add(float64(r.frameLen))
	if p.requestStart.IsZero() {
		return
	}
	t := &r.owed.timing
	t.Key, t.Version, t.CorrelationID = r.owed.key, r.owed.version, r.owed.correlationID
	t.ClientID, t.Principal, t.VirtualCluster = p.conn.ClientID, p.conn.User, p.conn.VirtualCluster
	t.RequestBytes, t.Start, t.Local = r.frameLen, p.requestStart, r.owed.local != nil
}

// observeOnRequestLoop completes and hands on the timing of a request
// that no response loop delivers: owing no response (acks=0), or answered
// before an upstream connection exists. responseBytes is what the client
// was sent.
func (p *pair) observeOnRequestLoop(t *RequestTiming, responseBytes int) {
	if t.Start.IsZero() {
		return
	}
	p.requestObserved = *t
	p.requestObserved.ResponseBytes, p.requestObserved.Done = responseBytes, time.Now()
	p.observe(&p.requestObserved)
}

// relay writes r upstream, whole when a stage read it, else streamed from
// cr; a request kproxy answered is dropped from cr instead.
func (p *pair) relay(cr *bufio.Reader, up *direction, r clientRequest) error {
	switch {
	case r.owed.local != nil: // answered by kproxy: never reaches the upstream
		return discardUnread(cr, r)
	case r.frame != nil:
		if err := writeFrame(up.w, r.frame, r.tail.pieces); err != nil {
			return fail(reasonUpstreamClosed, fmt.Errorf("write upstream: %w", err))
		}
	default:
		if err := up.stream(r.frameLen); err != nil {
			if errors.Is(err, errWriteSide) {
				return fail(reasonUpstreamClosed, err)
			}
			return clientReadError(err)
		}
	}
	return nil
}

// discardUnread drops r's frame from cr unless a stage read it already.
func discardUnread(cr *bufio.Reader, r clientRequest) error {
	if r.frame != nil {
		return nil
	}
	if _, err := cr.Discard(r.frameLen); err != nil {
		return clientReadError(err)
	}
	return nil
}

// releaseRequest gives back what the request loop holds for r once its
// frame is written: the pooled buffer and the budget.
func (p *pair) releaseRequest(r clientRequest, held *int64) {
	p.s.frames.put(r.recycle)
	for _, release := range r.tail.releases {
		release()
	}
	p.s.budget.release(&p.budget, *held)
	*held = 0
}

// flushIfIdle sends buffered requests upstream once the client has nothing
// more buffered: small pipelined requests go out together.
func flushIfIdle(cr *bufio.Reader, up *direction) error {
	if cr.Buffered() > 0 {
		return nil
	}
	if err := up.w.Flush(); err != nil {
		return fail(reasonUpstreamClosed, fmt.Errorf("write upstream: %w", err))
	}
	return nil
}

// upstreamSessionExpired ends a pair whose upstream SASL session (KIP-368)
// is over, once nothing is owed, so the client reconnects and kproxy
// authenticates afresh. kproxy re-authenticates before the end
// (reauthenticateUpstream); this is for a session that ended anyway, say
// while one client frame took longer than what was left of it. The request
// just read was not forwarded: the client retries it on the new connection.
func (p *pair) upstreamSessionExpired() error {
	for deadline := time.Now().Add(p.s.cfg.Limits.ShutdownTimeout); p.owed.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	return fail(reasonUpstreamClosed, errors.New("upstream SASL session lifetime over; closing so the client reconnects"))
}

// responseOwed says which response the client expects for a request with
// header h whose body starts with bodyPrefix (as much of the body as the
// read buffer holds). expected is false for a request that gets no response
// (Produce with acks=0). An error means kproxy must not forward the request.
func (p *pair) responseOwed(h protocol.RequestHeader, bodyPrefix []byte) (owed pending, expected bool, err error) {
	owed = pending{correlationID: h.CorrelationID, key: h.APIKey, version: h.APIVersion, timing: RequestTiming{ErrorCode: -1}}
	if !wire.SupportedVersion(h.APIKey, h.APIVersion) {
		if h.APIKey != wire.APIVersionsKey {
			return owed, false, fail(reasonProtocol, fmt.Errorf("client request %s v%d: %w (kproxy decodes up to v%d)",
				protocol.APIName(h.APIKey), h.APIVersion, protocol.ErrUnsupportedVersion, protocol.MaxVersion(h.APIKey)))
		}
		// As a broker does (KIP-511): answer in the v0 layout with the
		// versions we do support, and the client retries within them.
		owed.local = unsupportedAPIVersionsFrame(h.CorrelationID)
		owed.timing.ErrorCode = wire.ErrCodeUnsupportedVersion
		return owed, true, nil
	}
	if h.APIKey == wire.ProduceKey {
		acks, err := wire.ProduceAcks(h.APIVersion, bodyPrefix)
		if err != nil {
			return owed, false, fail(reasonProtocol, fmt.Errorf("client produce request: %w", err))
		}
		if acks == 0 {
			return owed, false, nil
		}
	}
	return owed, true, nil
}

// owe queues a response the client is owed, waiting while max_in_flight
// responses are already owed: back-pressure instead of unbounded buffering.
func (p *pair) owe(owed pending) error {
	if owed.hold.held() {
		p.s.holder.owing(p, owed.hold)
	}
	p.owed.Add(1)
	p.s.metrics.inFlight.Inc()
	if !p.inflight.push(owed, p.closed) {
		return fail(reasonUpstreamClosed, errors.New("pair closed while queueing a request"))
	}
	if owed.local != nil {
		p.wakeResponses() // no upstream bytes will come for it
	}
	return nil
}

// midFrameDeadline is where to push the client's read deadline while a
// frame is still arriving: briefly when draining or when the upstream
// session is due for re-authentication (both wait for the frame's end),
// else the idle timeout or the re-authentication, whichever comes first.
func (p *pair) midFrameDeadline() time.Time {
	if p.draining.Load() || p.session.reauthDue() {
		return time.Now().Add(drainPoll)
	}
	return p.readDeadline()
}

// armMidFrameDeadline sets midFrameDeadline, and polls after all if drain
// ran meanwhile (as armReadDeadline, but mid-frame a past deadline would
// spin).
func (p *pair) armMidFrameDeadline() {
	p.client.SetReadDeadline(p.midFrameDeadline())
	if p.draining.Load() {
		p.client.SetReadDeadline(time.Now().Add(drainPoll))
	}
}

func unsupportedAPIVersionsFrame(correlationID int32) []byte {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	resp.ErrorCode = wire.ErrCodeUnsupportedVersion
	resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{
		ApiKey:     wire.APIVersionsKey,
		MinVersion: 0,
		MaxVersion: protocol.MaxVersion(wire.APIVersionsKey),
	}}
	return protocol.AppendResponseFrame(nil, correlationID, resp)
}
