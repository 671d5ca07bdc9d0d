package engine

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/labels"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// passthroughAuth is the auth stage in SASL passthrough mode: the client's
// SASL exchange goes to the upstream untouched, and kproxy follows it to
// learn the user name for policy.
type passthroughAuth struct {
	saslProgress
	mechanism string
	// unframed counts raw tokens still expected after a v0 handshake.
	unframed int
	sawUser  bool
	// steps counts the SaslAuthenticate requests of the current login.
	steps int
}

// saslSteps is how many SaslAuthenticate round trips a login with
// mechanism takes, for counting successful passthrough logins; 0: kproxy
// cannot tell (GSSAPI), and counts only failures.
func (a *passthroughAuth) saslSteps(mechanism string) int {
	m, _ := a.p.s.cfg.Mechanisms().Server(mechanism)
	return m.Steps
}

// countUpstreamVerdict returns a response hook that counts the upstream's
// answer to step of a passthrough login with mechanism: a failure, or a
// success once its last step is answered without error.
func (a *passthroughAuth) countUpstreamVerdict(mechanism string, step int) func(kmsg.Response) error {
	s := a.p.s
	return func(resp kmsg.Response) error {
		ar, ok := resp.(*kmsg.SASLAuthenticateResponse)
		switch {
		case !ok:
		case ar.ErrorCode != 0:
			s.countSASL(mechanism, labels.Failure)
		case step == a.saslSteps(mechanism):
			s.countSASL(mechanism, labels.Success)
		}
		return nil
	}
}

func (*passthroughAuth) frameLimit(configured int32) int32 { return configured }

// request watches SaslHandshake and SaslAuthenticate go by; any other
// request but ApiVersions means the client believes it is authenticated
// (an upstream that disagrees closes the connection): the handshake is
// over.
func (a *passthroughAuth) request(h protocol.RequestHeader, cr *bufio.Reader, r clientRequest) (clientRequest, error) {
	switch h.APIKey {
	case wire.SASLHandshakeKey, wire.SASLAuthenticateKey:
		return a.watch(h, cr, r)
	case wire.APIVersionsKey:
	default:
		a.finish()
	}
	return r, nil
}

// token forwards a raw token of a v0 exchange; the upstream answers it
// with a raw token too (relayRawToken).
func (a *passthroughAuth) token(cr *bufio.Reader, frameLen int) (clientRequest, bool, error) {
	if a.unframed == 0 {
		return clientRequest{}, false, nil
	}
	a.unframed--
	if err := checkSASLFrame(frameLen); err != nil {
		return clientRequest{}, true, err
	}
	token, err := readFrame(nil, cr, frameLen)
	if err != nil {
		return clientRequest{}, true, err
	}
	if !a.sawUser {
		if err := a.learnUser(token[protocol.FrameSizeLen:]); err != nil {
			// A v0 client cannot be told why: close, as a broker does.
			return clientRequest{}, true, err
		}
	}
	return clientRequest{frameLen: frameLen, frame: token, owed: pending{deliver: relayRawToken}, expected: true}, true, nil
}

func (*passthroughAuth) upstreamConnected(context.Context, net.Conn) error { return nil }

// watch reads a SASL request that is forwarded unchanged, noting the
// mechanism and the user name. A first message that does not name the
// broker's principal is not forwarded: owed gets a
// SASL_AUTHENTICATION_FAILED answer and the pair closes after it.
func (a *passthroughAuth) watch(h protocol.RequestHeader, cr *bufio.Reader, r clientRequest) (clientRequest, error) {
	frame, req, err := readSASLRequest(h, cr, r.frameLen)
	if err != nil {
		return r, err
	}
	r.frame = frame
	switch req := req.(type) {
	case *kmsg.SASLHandshakeRequest:
		a.mechanism, a.steps = req.Mechanism, 0
		if h.APIVersion == 0 {
			// Raw tokens follow, one per step of a mechanism whose
			// messages kproxy reads.
			if m, _ := a.p.s.cfg.Mechanisms().Server(req.Mechanism); m.Readable() {
				a.unframed = m.Steps
			} else {
				return r, fail(reasonAuth, fmt.Errorf("passthrough of mechanism %q after a v0 SaslHandshake is not supported; use SaslHandshake v1", req.Mechanism))
			}
		}
	case *kmsg.SASLAuthenticateRequest:
		if !a.sawUser {
			if err := a.learnUser(req.SASLAuthBytes); err != nil {
				msg := "Authentication failed: kproxy cannot determine the principal of this SASL " + a.mechanism + " login"
				r.owed.local = protocol.AppendResponseFrame(nil, h.CorrelationID, &kmsg.SASLAuthenticateResponse{
					Version: req.Version, ErrorCode: wire.ErrCodeSASLAuthenticationFailed, ErrorMessage: &msg,
				})
				r.closeAfter = err
				a.p.s.countSASL(a.mechanism, labels.Failure)
				return r, nil
			}
		}
		a.steps++
		r.owed.onResponse = a.countUpstreamVerdict(a.mechanism, a.steps)
	}
	return r, nil
}

// learnUser takes the broker's principal from the client's first SASL
// message. An error means kproxy cannot know it while a request filter
// (the policy) could decide by it, and the connection must be refused (the
// close is logged with why): an ANONYMOUS or wrong principal would skip
// User: rules and per-user governance.
func (a *passthroughAuth) learnUser(firstMessage []byte) error {
	p := a.p
	a.sawUser = true
	user, err := p.s.cfg.Mechanisms().UserFromClientMessage(a.mechanism, firstMessage)
	if err != nil {
		if p.s.requestHandlers.empty() {
			// No filter decides by principal: the user name only labels log
			// lines, so a login kproxy cannot read (GSSAPI, OAUTHBEARER,
			// delegation tokens) is the broker's business alone.
			p.logger().Warn().Err(err).Str("mechanism", a.mechanism).
				Msg("passthrough SASL: principal unknown to kproxy; no request filter is configured, so the login is forwarded")
			return nil
		}
		return fail(reasonAuth, fmt.Errorf("passthrough SASL login refused: %w", err))
	}
	p.conn.User = user
	p.setLogger(p.logger().With().Str("user", user).Logger())
	p.logger().Info().Str("mechanism", a.mechanism).Msg("passthrough SASL: client authenticating upstream")
	return nil
}

// relayRawToken relays one unframed SASL token the upstream sends back in
// a passthrough v0 exchange: a size and bytes, no correlation id. It is
// the deliverFunc of a forwarded raw token.
func relayRawToken(_ *pair, _ pending, down *direction) error {
	prefix, err := down.r.Peek(protocol.FrameSizeLen)
	if err != nil {
		return upstreamReadError(err)
	}
	size := int(binary.BigEndian.Uint32(prefix))
	if size < 0 || size > maxUnauthenticatedFrame {
		return fail(reasonProtocol, fmt.Errorf("upstream SASL token of %d bytes", size))
	}
	return streamError(copyFrame(down.w, down.r, protocol.FrameSizeLen+size))
}
