package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
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
		var filtered []byte // the frame to send instead, if a filter changed it
		if owed == nil || owed.local == nil {
			if filters := p.s.requestFilters.lookup(h.APIKey); len(filters) > 0 {
				verdict := owed
				if verdict == nil { // acks=0: filters still decide, but nothing is owed
					verdict = &pending{}
				}
				if filtered, err = p.filterRequest(h, cr, frameLen, verdict, filters); err != nil {
					return err
				}
				if owed == nil && verdict.local != nil {
					// No response can carry the refusal: close, as a broker
					// does for a failed acks=0 produce.
					return fail(reasonFilter, errors.New("acks=0 produce refused by a filter"))
				}
			}
		}
		if owed != nil && owed.local != nil {
			// Answered by kproxy: the frame never reaches the upstream.
			if filtered == nil {
				if _, err := cr.Discard(frameLen); err != nil {
					return clientReadError(err)
				}
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
		if filtered != nil {
			if _, err := uw.Write(filtered); err != nil {
				return fail(reasonUpstreamClosed, fmt.Errorf("write upstream: %w", err))
			}
		} else if err := copyFrame(uw, cr, frameLen); err != nil {
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

// filterRequest reads the whole request frame from cr, decodes it once and
// passes it through filters. It returns the frame to forward (the original
// bytes, or a re-encoding if a filter changed the request) and fills in
// owed: a local answer, or a hook for the upstream's response. The caller
// must not read the frame from cr again.
func (p *pair) filterRequest(h protocol.RequestHeader, cr *bufio.Reader, frameLen int, owed *pending, filters []filter.RequestFilter) ([]byte, error) {
	frame := make([]byte, frameLen)
	if _, err := io.ReadFull(cr, frame); err != nil {
		return nil, clientReadError(err)
	}
	req, err := protocol.DecodeRequest(h.APIKey, h.APIVersion, frame[protocol.FrameSizeLen+h.Len:])
	if err != nil {
		return nil, fail(reasonProtocol, fmt.Errorf("client request: %w", err))
	}
	p.conn.ClientID = h.ClientID
	var modified bool
	var hooks []func(kmsg.Response) error
	for _, f := range filters {
		v := f.FilterRequest(&p.conn, req)
		if v.Close != nil {
			return nil, fail(reasonFilter, v.Close)
		}
		if v.Respond != nil {
			owed.local = protocol.AppendResponseFrame(nil, h.CorrelationID, v.Respond)
			return frame, nil
		}
		modified = modified || v.Modified
		if v.OnResponse != nil {
			hooks = append(hooks, v.OnResponse)
		}
	}
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
	if modified {
		return protocol.AppendRequestFrame(nil, h, req), nil
	}
	return frame, nil
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
