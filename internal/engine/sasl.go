package engine

import (
	"bufio"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// maxUnauthenticatedFrame bounds frames before SASL authentication: a
// token plus a request header.
const maxUnauthenticatedFrame = auth.MaxTokenSize + 1<<10

// checkSASLFrame refuses a SASL frame (a SaslHandshake or SaslAuthenticate
// request, or a raw token after a v0 handshake) larger than a token plus a
// header before anything is allocated for it, as a broker does
// (sasl.server.max.receive.size). Without it, a passthrough client that
// has not authenticated could make kproxy allocate limits.max_frame_bytes
// per connection by announcing a huge frame and sending a few bytes of it.
func checkSASLFrame(frameLen int) error {
	if size := frameLen - protocol.FrameSizeLen; size > maxUnauthenticatedFrame {
		return fail(reasonProtocol, fmt.Errorf("SASL frame of %d bytes exceeds %d", size, maxUnauthenticatedFrame))
	}
	return nil
}

// readSASLRequest reads and decodes a request a client sends while SASL
// decides what it may send (SaslHandshake, SaslAuthenticate, and in
// terminate mode ApiVersions before authentication), refusing one larger
// than a token before anything is allocated for it.
func readSASLRequest(h protocol.RequestHeader, cr *bufio.Reader, frameLen int) ([]byte, kmsg.Request, error) {
	if err := checkSASLFrame(frameLen); err != nil {
		return nil, nil, err
	}
	frame, err := readFrame(nil, cr, frameLen)
	if err != nil {
		return nil, nil, err
	}
	req, err := protocol.DecodeRequest(h.APIKey, h.APIVersion, frame[protocol.FrameSizeLen+h.Len:])
	if err != nil {
		return nil, nil, fail(reasonProtocol, fmt.Errorf("client request: %w", err))
	}
	return frame, req, nil
}

// saslVersions makes sure a client that must authenticate to kproxy sees
// SaslHandshake v0-v1 and SaslAuthenticate v0-v2 advertised, whatever the
// upstream's plaintext listener says: librdkafka, kafka-python and kafkajs
// pick their SASL framing from these entries.
type saslVersions struct{}

func (v saslVersions) Register(r *filter.Registry) { filter.OnResponse(r, v.advertise) }

func (saslVersions) advertise(r *kmsg.ApiVersionsResponse) error {
	if r.ErrorCode != 0 {
		return nil
	}
	want := map[int16]int16{wire.SASLHandshakeKey: 1, wire.SASLAuthenticateKey: 2}
	for i := range r.ApiKeys {
		if maxV, ok := want[r.ApiKeys[i].ApiKey]; ok {
			r.ApiKeys[i].MinVersion, r.ApiKeys[i].MaxVersion = 0, maxV
			delete(want, r.ApiKeys[i].ApiKey)
		}
	}
	for _, key := range []int16{wire.SASLHandshakeKey, wire.SASLAuthenticateKey} {
		if maxV, ok := want[key]; ok {
			r.ApiKeys = append(r.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: key, MaxVersion: maxV})
		}
	}
	return nil
}
