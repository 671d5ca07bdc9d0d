package engine

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// Setting throttle_time_ms in a response a quota throttled: in place
// where the field's position is known without decoding (Fetch, Produce),
// else in the decoded response; always the larger of kproxy's and the
// broker's.

// throttleMillis is d as a throttle_time_ms value.
func throttleMillis(d time.Duration) int32 {
	return int32(min(d.Milliseconds(), int64(1<<31-1)))
}

// clientBacksOff reports whether a client of key at version throttles
// itself on throttle_time_ms (KIP-219: Produce v6+, Fetch v8+ and the
// like); to older clients a broker delays the response instead.
func clientBacksOff(key, version int16) bool {
	resp := kmsg.ResponseForKey(key)
	if resp == nil {
		return false
	}
	resp.SetVersion(version)
	tr, ok := resp.(kmsg.ThrottleResponse)
	if !ok {
		return false
	}
	_, after := tr.Throttle()
	return after
}

// setFetchThrottle sets throttle_time_ms, the first field of a Fetch v1+
// response body, to the larger of the broker's and throttle, in down's
// read buffer before the frame is relayed: no decoding, and the frame
// (streamed or not) keeps its size. It reports false when the header is
// longer than it looks at (tagged fields in a flexible header, which no
// broker sends today): the caller decodes the response then.
func setFetchThrottle(down *direction, version int16, frameLen int, throttle time.Duration) bool {
	if version < 1 {
		return true // no such field: the delay is all the client gets
	}
	off := protocol.FrameSizeLen + 4 // size, correlation id
	if wire.ResponseHeaderFlexible(wire.FetchKey, version) {
		off++ // an empty tag section; anything else is decoded
	}
	if frameLen < off+4 {
		return false // malformed: decoding says how
	}
	// bufio.Reader.Peek returns its buffer's bytes, which the next read
	// hands on: changing them changes what is relayed.
	head, err := down.r.Peek(off + 4)
	if err != nil || (off > protocol.FrameSizeLen+4 && head[off-1] != 0) {
		return false
	}
	raiseThrottleField(head[off:off+4], throttle)
	return true
}

// raiseThrottleField sets an encoded throttle_time_ms to throttle, unless
// the broker's is larger.
func raiseThrottleField(field []byte, throttle time.Duration) {
	ms := max(throttleMillis(throttle), int32(binary.BigEndian.Uint32(field)))
	binary.BigEndian.PutUint32(field, uint32(ms))
}

// relayThrottledProduce relays a Produce response that must carry
// throttle: read whole (a Produce response holds no records, only offsets
// and errors), its throttle_time_ms, after the topics array, found by a
// walk and set in place, without decoding.
func (p *pair) relayThrottledProduce(owed *pending, down *direction, frameLen int, throttle time.Duration) error {
	if err := p.s.budget.acquire(&p.budget, int64(frameLen), p.closed); err != nil {
		return fail(reasonClientClosed, err)
	}
	defer p.s.budget.release(&p.budget, int64(frameLen))
	frame := p.decodeBuffer(frameLen)
	defer p.releaseBuffers()
	if _, err := io.ReadFull(down.r, frame); err != nil {
		return upstreamReadError(err)
	}
	body, err := wire.SkipResponseHeader(owed.key, owed.version, frame[protocol.FrameSizeLen:])
	off := 0
	if err == nil {
		off, err = wire.ProduceThrottleOffset(owed.version, body)
	}
	if err != nil {
		return fail(reasonProtocol, fmt.Errorf("upstream Produce response: %w", err))
	}
	raiseThrottleField(body[off:off+4], throttle)
	p.countWalkedErrors(owed, body)
	if _, err := down.w.Write(frame); err != nil {
		return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
	}
	return nil
}

// setDecodedThrottle sets a decoded response's throttle_time_ms to the
// larger of the broker's and throttle.
func setDecodedThrottle(resp kmsg.Response, throttle time.Duration) {
	tr, ok := resp.(kmsg.ThrottleResponse)
	if !ok {
		return
	}
	if broker, _ := tr.Throttle(); broker < throttleMillis(throttle) {
		resp.(kmsg.SetThrottleResponse).SetThrottle(throttleMillis(throttle))
	}
}
