package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/kproxy/kproxy/protocol"
)

// forwardResponses is the response loop: for each owed response, in the
// order the client asked, it writes kproxy's own answer or relays the
// upstream's, checking the correlation id. It returns nil once the request
// loop has stopped and every owed response is delivered.
func (p *pair) forwardResponses(ur *bufio.Reader, cw *bufio.Writer) error {
	for owed := range p.inflight {
		var err error
		if owed.local != nil {
			_, err = cw.Write(owed.local)
			if err != nil {
				err = fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
			}
		} else {
			err = p.relayResponse(owed, ur, cw)
		}
		if err != nil {
			return err
		}
		p.activity.Add(1)
		// Flush before anything that may block: waiting for the next owed
		// response, or for bytes of the next upstream frame.
		if len(p.inflight) == 0 || ur.Buffered() < protocol.FrameSizeLen {
			if err := cw.Flush(); err != nil {
				return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
			}
		}
	}
	if err := cw.Flush(); err != nil {
		return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
	}
	return fail(reasonDrained, errDraining)
}

// relayResponse reads the upstream's response to owed and writes it to the
// client, through the response filters if any want this API.
func (p *pair) relayResponse(owed pending, ur *bufio.Reader, cw *bufio.Writer) error {
	prefix, err := ur.Peek(protocol.FrameSizeLen + 4)
	if err != nil {
		return upstreamReadError(err)
	}
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

	filters := p.s.responseFilters.lookup(owed.key)
	if len(filters) == 0 && owed.onResponse == nil {
		if err := copyFrame(cw, ur, frameLen); err != nil {
			if errors.Is(err, errWriteSide) {
				return fail(reasonClientClosed, err)
			}
			return upstreamReadError(err)
		}
		return nil
	}

	frame := p.decodeBuffer(frameLen)
	if _, err := io.ReadFull(ur, frame); err != nil {
		return upstreamReadError(err)
	}
	body, err := protocol.SkipResponseHeader(owed.key, owed.version, frame[protocol.FrameSizeLen:])
	if err != nil {
		return fail(reasonProtocol, fmt.Errorf("upstream %s response: %w", protocol.APIName(owed.key), err))
	}
	resp, err := protocol.DecodeResponse(owed.key, owed.version, body)
	if err != nil {
		return fail(reasonProtocol, fmt.Errorf("upstream response: %w", err))
	}
	if owed.onResponse != nil {
		if err := owed.onResponse(resp); err != nil {
			return fail(reasonFilter, err)
		}
	}
	for _, f := range filters {
		if err := f.FilterResponse(resp); err != nil {
			return fail(reasonRewrite, err)
		}
	}
	p.encodeBuf = protocol.AppendResponseFrame(p.encodeBuf[:0], corr, resp)
	if _, err := cw.Write(p.encodeBuf); err != nil {
		return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
	}
	p.releaseBuffers()
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
}

func upstreamReadError(err error) error {
	return fail(reasonUpstreamClosed, fmt.Errorf("read upstream: %w", err))
}
