package engine

import (
	"bufio"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/quota"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// The fetch quota, as a broker holds it (KafkaApis.handleFetchRequest,
// KIP-219): the quota is the principal's, across all its connections, and
// a fetch that comes while the principal is over it gets an empty
// response carrying the throttle time instead of records, on whichever
// connection it came. A connection bound to a fetch quota has one fetch
// at a time in flight, as a broker reads a connection's next request only
// once it answered the last: a pipelined fetch waits for the one before
// it and for the mute that one's throttle set, so that a client cannot
// have fetches forwarded faster than its quota by writing many at once.

// fetchQuota is quotaStage for a fetch r of a connection whose binding b
// limits fetch bytes. It waits for the connection's fetch in flight and
// its throttle, then, if the principal is over its quota, answers r
// itself with an empty throttled response and mutes the connection. A
// fetch continuing a fetch session is forwarded even then, so that the
// broker's session epoch stays the client's; its response is replaced by
// an empty one if the principal is still over (relayResponse).
func (p *pair) fetchQuota(r *clientRequest, cr *bufio.Reader, up *direction, b *quota.Binding) error {
	if err := p.awaitFetchInFlight(up); err != nil {
		return err
	}
	if err := p.waitMuted(); err != nil {
		return err
	}
	r.owed.hold.flags |= fetchHeld
	throttle := b.Check(quota.Fetch, time.Now())
	if throttle == 0 {
		return nil
	}
	id, epoch, err := fetchRequestSession(r, cr)
	if err != nil || wire.FetchIncremental(id, epoch) {
		return nil // forwarded: a malformed one is the broker's to refuse
	}
	// As a broker answers a throttled full or sessionless fetch: no
	// session (it was not created), no partitions.
	r.owed.local = throttledFetchFrame(r.owed.correlationID, r.owed.version, wire.FetchSessionless, throttle)
	r.owed.hold.delay = throttle
	p.mute(throttle)
	return nil
}

// awaitFetchInFlight waits until the connection's quota-bound fetches
// already forwarded are answered. What the request loop wrote upstream
// is flushed first, or the response waited for might never come.
func (p *pair) awaitFetchInFlight(up *direction) error {
	if p.fetchesOwed.Load() == 0 {
		return nil
	}
	if up != nil {
		if err := up.w.Flush(); err != nil {
			return fail(reasonUpstreamClosed, fmt.Errorf("write upstream: %w", err))
		}
	}
	for p.fetchesOwed.Load() > 0 {
		select {
		case <-p.fetchAnswered:
		case <-p.closed:
			return fail(reasonClientClosed, errors.New("closed while a fetch waited for the one before it"))
		}
	}
	return nil
}

// fetchDelivered is the response loop's note that a quota-bound fetch
// was answered: the request loop may forward the next.
func (p *pair) fetchDelivered() {
	p.fetchesOwed.Add(-1)
	wake(p.fetchAnswered) // made before the fetch was owed (owe)
}

// fetchRequestSession reads r's session id and epoch from its body: in
// the frame a stage read, or in what cr buffers of it.
func fetchRequestSession(r *clientRequest, cr *bufio.Reader) (id, epoch int32, err error) {
	frame := r.frame
	if frame == nil {
		if frame, err = cr.Peek(min(r.frameLen, cr.Size())); err != nil {
			return 0, 0, fmt.Errorf("fetch request: %w", err)
		}
	}
	h, _, err := protocol.PeekRequestHeader(frame[protocol.FrameSizeLen:])
	if err != nil {
		return 0, 0, fmt.Errorf("fetch request: %w", err)
	}
	if r.owed.version < wire.FetchSessionsVersion {
		return wire.FetchSessionless, -1, nil // no sessions: a sessionless fetch
	}
	id, epoch, ok := wire.FetchRequestSession(r.owed.version, frame[protocol.FrameSizeLen+h.Len:])
	if !ok {
		return 0, 0, fmt.Errorf("fetch request session: %w", protocol.ErrShortBuffer)
	}
	return id, epoch, nil
}

// throttledFetchFrame is a broker's answer to a fetch it throttles
// (FetchContext.getThrottledResponse): no error, no partitions, the
// session id kept for a session the broker holds, throttle_time_ms set.
func throttledFetchFrame(correlationID int32, version int16, sessionID int32, throttle time.Duration) []byte {
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(version)
	resp.ThrottleMillis = throttleMillis(throttle)
	resp.SessionID = sessionID
	return protocol.AppendResponseFrame(nil, correlationID, resp)
}

// fetchHeadLen is how much of a Fetch response frame replaceOverQuotaFetch
// reads: size, correlation id, an empty header tag section, and the body's
// throttle_time_ms, error_code and session_id.
const fetchHeadLen = protocol.FrameSizeLen + 4 + 1 + 10

// chargeFetchResponse holds owed, a quota-bound fetch whose response of
// frameLen bytes is next in down, to the fetch quota, as a broker does:
// within the quota its bytes are counted and the hold's delay is raised to
// the throttle they bring (the connection muted for it), and it reports
// false: the response is relayed. Over the quota (another connection of
// the principal, or this one's fetch before, took it over while the fetch
// was on its way) the response is replaced by an empty throttled one, its
// bytes discarded unread and not counted (a broker "unrecords" them), and
// it reports true. The consumer's position does not move, so it fetches
// the same records again once the throttle is over; nothing is lost. The
// session id of a session the broker holds is kept. A response with an
// error, or a header it does not expect, is left to the usual path
// (fetchCounted not set), which counts and relays it.
func (p *pair) chargeFetchResponse(owed *pending, down *direction, frameLen int) (bool, error) {
	head, err := down.r.Peek(min(frameLen, fetchHeadLen))
	if err != nil {
		return false, upstreamReadError(err)
	}
	body, err := wire.SkipResponseHeader(owed.key, owed.version, head[protocol.FrameSizeLen:])
	if err != nil {
		return false, nil // decoded on the usual path, which says what is wrong
	}
	code, sessionID, err := wire.FetchResponseSession(owed.version, body)
	if err != nil || code != 0 {
		return false, nil
	}
	now := time.Now()
	b := binding(&owed.hold)
	throttle, recorded := b.RecordUnlessOver(quota.Fetch, float64(frameLen), now)
	if recorded {
		owed.hold.flags |= fetchCounted
		if throttle > owed.hold.delay {
			owed.hold.delay = throttle
			p.mute(throttle)
		}
		return false, nil
	}
	if b.Limits(quota.Request) {
		throttle = max(throttle, b.Record(quota.Request, 0, now))
	}
	if _, err := down.r.Discard(frameLen); err != nil {
		return false, upstreamReadError(err)
	}
	p.mute(throttle)
	frame := throttledFetchFrame(owed.correlationID, owed.version, sessionID, throttle)
	p.observed.ResponseBytes = len(frame)
	return true, p.writeThrottled(owed, down, frame, throttle)
}

// writeThrottled writes kproxy's throttled answer to owed, delaying it by
// the throttle time for a client too old to back off by itself, as a
// broker does.
func (p *pair) writeThrottled(owed *pending, down *direction, frame []byte, throttle time.Duration) error {
	if !clientBacksOff(owed.key, owed.version) {
		if err := down.w.Flush(); err != nil {
			return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
		}
		if !p.sleep(throttle) {
			return fail(reasonClientClosed, errors.New("closed while delaying a throttled response"))
		}
	}
	if _, err := down.w.Write(frame); err != nil {
		return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
	}
	return nil
}
