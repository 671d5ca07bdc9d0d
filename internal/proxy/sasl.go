package proxy

import (
	"bufio"
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/protocol"
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

// passthroughSASL follows a client's SASL exchange that kproxy forwards
// untouched, to learn the user name for policy.
type passthroughSASL struct {
	mechanism string
	// unframed counts raw tokens still expected after a v0 handshake.
	unframed int
	sawUser  bool
}

// saslStep handles a frame while SASL decides what the client may send. It
// runs before the header is parsed, because after a v0 handshake the
// client sends raw tokens that have none. handled means the frame was
// consumed (answered or forwarded) and the loop moves on.
func (p *pair) saslStep(cr *bufio.Reader, frameLen int, up **direction, responses *sync.WaitGroup) (handled bool, err error) {
	switch {
	case p.authn != nil && p.authn.ExpectUnframed():
		if err := checkSASLFrame(frameLen); err != nil {
			return true, err
		}
		token, err := readFrame(nil, cr, frameLen)
		if err != nil {
			return true, err
		}
		out, done, err := p.authn.Unframed(token[protocol.FrameSizeLen:])
		if err != nil {
			// A v0 client cannot be told why: close, as a broker does.
			return true, fail(reasonAuth, fmt.Errorf("SASL (v0 handshake): %w", err))
		}
		if done {
			p.authenticated()
		}
		answer := pending{raw: true, local: append(protocol.AppendFrameSize(nil, len(out)), out...)}
		if *up == nil {
			return true, p.answerDirect(answer)
		}
		return true, p.owe(answer)
	case p.passthrough != nil && p.passthrough.unframed > 0:
		p.passthrough.unframed--
		if err := checkSASLFrame(frameLen); err != nil {
			return true, err
		}
		token, err := readFrame(nil, cr, frameLen)
		if err != nil {
			return true, err
		}
		if !p.passthrough.sawUser {
			if err := p.learnPassthroughUser(token[protocol.FrameSizeLen:]); err != nil {
				// A v0 client cannot be told why: close, as a broker does.
				return true, err
			}
		}
		if *up == nil {
			if *up, err = p.connect(cr, responses); err != nil {
				return true, err
			}
		}
		if err := p.owe(pending{raw: true}); err != nil {
			return true, err
		}
		if _, err := (*up).w.Write(token); err != nil {
			return true, fail(reasonUpstreamClosed, fmt.Errorf("write upstream: %w", err))
		}
		return true, flushIfIdle(cr, *up)
	}
	return false, nil
}

// saslRequest applies SASL rules to a parsed request. In terminate mode it
// answers SaslHandshake and SaslAuthenticate itself (setting owed.local and
// returning the frame it read) and refuses anything but ApiVersions before
// authentication; in passthrough mode it watches the exchange go by.
func (p *pair) saslRequest(h protocol.RequestHeader, cr *bufio.Reader, frameLen int, owed *pending) ([]byte, error) {
	switch {
	case p.authn != nil:
		switch h.APIKey {
		case protocol.SASLHandshakeKey, protocol.SASLAuthenticateKey:
			return p.answerSASL(h, cr, frameLen, owed)
		case protocol.APIVersionsKey:
			if !p.authn.Authenticated() && owed.local == nil {
				return p.answerAPIVersions(h, cr, frameLen, owed)
			}
		}
		// Before authentication, during a re-authentication and after the
		// session lifetime (KIP-368, any client version), as a broker does.
		if err := p.authn.Admit(h.APIKey); err != nil {
			return nil, fail(reasonAuth, err)
		}
	case p.passthrough != nil:
		switch h.APIKey {
		case protocol.SASLHandshakeKey, protocol.SASLAuthenticateKey:
			return p.watchSASL(h, cr, frameLen, owed)
		case protocol.APIVersionsKey:
		default:
			// The client believes it is authenticated (an upstream that
			// disagrees closes the connection): the handshake is over.
			p.authDone.Store(true)
		}
	}
	return nil, nil
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

func (p *pair) answerSASL(h protocol.RequestHeader, cr *bufio.Reader, frameLen int, owed *pending) ([]byte, error) {
	frame, req, err := readSASLRequest(h, cr, frameLen)
	if err != nil {
		return nil, err
	}
	var resp kmsg.Response
	var failure error
	switch r := req.(type) {
	case *kmsg.SASLHandshakeRequest:
		hs := p.authn.Handshake(r)
		if hs.ErrorCode != 0 {
			failure = fmt.Errorf("SaslHandshake for mechanism %q refused with error %d", r.Mechanism, hs.ErrorCode)
		}
		resp = hs
	case *kmsg.SASLAuthenticateRequest:
		ar, done, err := p.authn.Authenticate(r)
		if err != nil {
			failure = err
		} else if done {
			p.authenticated()
		}
		resp = ar
	}
	owed.local = protocol.AppendResponseFrame(nil, h.CorrelationID, resp)
	if failure != nil {
		// The client reads why, then the connection closes, as with a broker.
		owed.closeAfter = fail(reasonAuth, failure)
	}
	return frame, nil
}

// answerAPIVersions answers the ApiVersions request of a client that has
// not authenticated from the node's cached answer, at the version it asked
// for: nothing such a client sends reaches the upstream. It returns the
// frame it read. As a broker does, a v3+ request whose client software
// name or version is malformed gets INVALID_REQUEST.
func (p *pair) answerAPIVersions(h protocol.RequestHeader, cr *bufio.Reader, frameLen int, owed *pending) ([]byte, error) {
	frame, req, err := readSASLRequest(h, cr, frameLen)
	if err != nil {
		return nil, err
	}
	if r := req.(*kmsg.ApiVersionsRequest); h.APIVersion >= 3 && !(validSoftwareField(r.ClientSoftwareName) && validSoftwareField(r.ClientSoftwareVersion)) {
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.SetVersion(h.APIVersion)
		resp.ErrorCode = protocol.ErrCodeInvalidRequest
		owed.local = protocol.AppendResponseFrame(nil, h.CorrelationID, resp)
		return frame, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.s.cfg.Upstream.DialTimeout)
	defer cancel()
	go func() { // a pair that closes stops waiting
		select {
		case <-p.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	resp, err := p.s.apiVersions.get(ctx, p.nodeID, p.s.apiVersionsFetcher(p.nodeID))
	if err != nil {
		return nil, fail(reasonDial, fmt.Errorf("ApiVersions before SASL authentication: %w", err))
	}
	owed.local = apiVersionsAnswer(resp, h.APIVersion, h.CorrelationID)
	return frame, nil
}

// validSoftwareField is Kafka's rule for ApiVersions v3's client software
// name and version (KIP-511): letters, digits, '-' and '.', starting and
// ending with a letter or digit.
func validSoftwareField(s string) bool {
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	if s == "" || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := range len(s) {
		if c := s[i]; !alnum(c) && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// authenticated records a completed SASL exchange.
func (p *pair) authenticated() {
	p.authDone.Store(true)
	if p.conn.User != p.authn.User() {
		p.conn.User = p.authn.User()
		p.setLogger(p.logger().With().Str("user", p.conn.User).Logger())
	}
	p.logger().Debug().Str("mechanism", p.authn.Mechanism()).Msg("SASL authenticated")
}

// watchSASL reads a SASL request that is forwarded unchanged in passthrough
// mode, noting the mechanism and the user name. A first message that does
// not name the broker's principal is not forwarded: owed gets a
// SASL_AUTHENTICATION_FAILED answer and the connection closes after it.
func (p *pair) watchSASL(h protocol.RequestHeader, cr *bufio.Reader, frameLen int, owed *pending) ([]byte, error) {
	frame, req, err := readSASLRequest(h, cr, frameLen)
	if err != nil {
		return nil, err
	}
	switch r := req.(type) {
	case *kmsg.SASLHandshakeRequest:
		p.passthrough.mechanism = r.Mechanism
		if h.APIVersion == 0 {
			// Raw tokens follow; their count depends on the mechanism.
			switch r.Mechanism {
			case auth.Plain:
				p.passthrough.unframed = 1
			case auth.ScramSHA256, auth.ScramSHA512:
				p.passthrough.unframed = 2
			default:
				return nil, fail(reasonAuth, fmt.Errorf("passthrough of mechanism %q after a v0 SaslHandshake is not supported; use SaslHandshake v1", r.Mechanism))
			}
		}
	case *kmsg.SASLAuthenticateRequest:
		if !p.passthrough.sawUser {
			if err := p.learnPassthroughUser(r.SASLAuthBytes); err != nil {
				msg := "Authentication failed: kproxy cannot determine the principal of this SASL " + p.passthrough.mechanism + " login"
				owed.local = protocol.AppendResponseFrame(nil, h.CorrelationID, &kmsg.SASLAuthenticateResponse{
					Version: r.Version, ErrorCode: protocol.ErrCodeSASLAuthenticationFailed, ErrorMessage: &msg,
				})
				owed.closeAfter = err
			}
		}
	}
	return frame, nil
}

// learnPassthroughUser takes the broker's principal from the client's first
// SASL message. An error means kproxy cannot know it while a request filter
// (the policy) could decide by it, and the connection must be refused (the
// close is logged with why): an ANONYMOUS or wrong principal would skip
// User: rules and per-user governance.
func (p *pair) learnPassthroughUser(firstMessage []byte) error {
	p.passthrough.sawUser = true
	user, err := auth.UserFromClientMessage(p.passthrough.mechanism, firstMessage)
	if err != nil {
		if p.s.requestHandlers.empty() {
			// No filter decides by principal: the user name only labels log
			// lines, so a login kproxy cannot read (GSSAPI, OAUTHBEARER,
			// delegation tokens) is the broker's business alone.
			p.logger().Warn().Err(err).Str("mechanism", p.passthrough.mechanism).
				Msg("passthrough SASL: principal unknown to kproxy; no request filter is configured, so the login is forwarded")
			return nil
		}
		return fail(reasonAuth, fmt.Errorf("passthrough SASL login refused: %w", err))
	}
	p.conn.User = user
	p.setLogger(p.logger().With().Str("user", user).Logger())
	p.logger().Info().Str("mechanism", p.passthrough.mechanism).Msg("passthrough SASL: client authenticating upstream")
	return nil
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
	want := map[int16]int16{protocol.SASLHandshakeKey: 1, protocol.SASLAuthenticateKey: 2}
	for i := range r.ApiKeys {
		if maxV, ok := want[r.ApiKeys[i].ApiKey]; ok {
			r.ApiKeys[i].MinVersion, r.ApiKeys[i].MaxVersion = 0, maxV
			delete(want, r.ApiKeys[i].ApiKey)
		}
	}
	for _, key := range []int16{protocol.SASLHandshakeKey, protocol.SASLAuthenticateKey} {
		if maxV, ok := want[key]; ok {
			r.ApiKeys = append(r.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: key, MaxVersion: maxV})
		}
	}
	return nil
}

// newSASLState gives a new pair its SASL state per the listener mode.
func (p *pair) newSASLState() error {
	switch p.s.sec.saslMode {
	case config.SASLModeTerminate:
		a, err := auth.NewAuthenticator(p.s.sec.saslOpts)
		if err != nil {
			return fail(reasonAuth, err)
		}
		p.authn = a
	case config.SASLModePassthrough:
		p.passthrough = &passthroughSASL{}
	}
	return nil
}
