package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/protocol"
)

// forwardRequests is the request loop: it reads each client frame, decides
// what response the client is owed, and streams the frame upstream. It
// returns why it stopped.
func (p *pair) forwardRequests(responses *sync.WaitGroup) error {
	maxFrame := int32(p.s.cfg.Limits.MaxFrameBytes)
	cr := bufio.NewReaderSize(clientReader{p}, readBufSize)
	var uw *bufio.Writer
	for {
		p.atBoundary.Store(true)
		prefix, err := cr.Peek(protocol.FrameSizeLen)
		if err != nil {
			return clientReadError(err)
		}
		p.atBoundary.Store(false)
		size, err := protocol.ParseFrameSize(prefix, maxFrame)
		if err != nil {
			return fail(reasonProtocol, fmt.Errorf("client request: %w", err))
		}
		frameLen := protocol.FrameSizeLen + int(size)
		head, err := cr.Peek(min(frameLen, cr.Size()))
		if err != nil {
			return clientReadError(err)
		}
		h, err := protocol.ParseRequestHeader(head[protocol.FrameSizeLen:])
		if err != nil {
			if errors.Is(err, protocol.ErrShortBuffer) && len(head) < frameLen {
				err = fmt.Errorf("request header longer than %d bytes: %w", cr.Size(), err)
			}
			return fail(reasonProtocol, fmt.Errorf("client request: %w", err))
		}
		p.s.metrics.countRequest(h.APIKey)
		p.activity.Add(1)

		owed, err := p.responseOwed(h, head[protocol.FrameSizeLen+h.Len:])
		if err != nil {
			return err
		}
		if owed != nil && owed.local != nil {
			// Answered by kproxy: the frame never reaches the upstream.
			if _, err := cr.Discard(frameLen); err != nil {
				return clientReadError(err)
			}
			if err := p.owe(*owed); err != nil {
				return err
			}
			continue
		}
		if uw == nil {
			if uw, err = p.connect(responses); err != nil {
				return err
			}
		}
		if owed != nil {
			// Queued before the request is written, so its response can
			// never arrive first.
			if err := p.owe(*owed); err != nil {
				return err
			}
		}
		if err := copyFrame(uw, cr, frameLen); err != nil {
			if errors.Is(err, errWriteSide) {
				return fail(reasonUpstreamClosed, err)
			}
			return clientReadError(err)
		}
		if cr.Buffered() == 0 {
			if err := uw.Flush(); err != nil {
				return fail(reasonUpstreamClosed, fmt.Errorf("write upstream: %w", err))
			}
		}
	}
}

// responseOwed says which response the client expects for a request with
// header h whose body starts with bodyPrefix (as much of the body as the
// read buffer holds). It returns nil for a request that gets no response
// (Produce with acks=0), and an error for a request kproxy must not forward.
func (p *pair) responseOwed(h protocol.RequestHeader, bodyPrefix []byte) (*pending, error) {
	owed := &pending{correlationID: h.CorrelationID, key: h.APIKey, version: h.APIVersion}
	if !protocol.SupportedVersion(h.APIKey, h.APIVersion) {
		if h.APIKey != protocol.APIVersionsKey {
			return nil, fail(reasonProtocol, fmt.Errorf("client request %s v%d: %w (kproxy decodes up to v%d)",
				protocol.APIName(h.APIKey), h.APIVersion, protocol.ErrUnsupportedVersion, protocol.MaxVersion(h.APIKey)))
		}
		// As a broker does (KIP-511): answer in the v0 layout with the
		// versions we do support, and the client retries within them.
		owed.local = unsupportedAPIVersionsFrame(h.CorrelationID)
		return owed, nil
	}
	if h.APIKey == protocol.ProduceKey {
		acks, err := protocol.ProduceAcks(h.APIVersion, bodyPrefix)
		if err != nil {
			return nil, fail(reasonProtocol, fmt.Errorf("client produce request: %w", err))
		}
		if acks == 0 {
			return nil, nil
		}
	}
	return owed, nil
}

// owe queues a response the client is owed, waiting while max_in_flight
// responses are already owed: back-pressure instead of unbounded buffering.
func (p *pair) owe(owed pending) error {
	select {
	case p.inflight <- owed:
		return nil
	case <-p.closed:
		return fail(reasonUpstreamClosed, errors.New("pair closed while queueing a request"))
	}
}

func unsupportedAPIVersionsFrame(correlationID int32) []byte {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	resp.ErrorCode = protocol.ErrCodeUnsupportedVersion
	resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{
		ApiKey:     protocol.APIVersionsKey,
		MinVersion: 0,
		MaxVersion: protocol.MaxVersion(protocol.APIVersionsKey),
	}}
	return protocol.AppendResponseFrame(nil, correlationID, resp)
}
