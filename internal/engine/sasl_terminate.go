package engine

import (
	"bufio"
	"context"
	"fmt"
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/labels"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// terminateAuth is the auth stage in SASL terminate mode: kproxy is the
// client's SASL server (auth.Authenticator). It answers SaslHandshake and
// SaslAuthenticate itself, also for KIP-368 re-authentications and for raw
// tokens after a v0 handshake, and until the client has authenticated it
// answers ApiVersions from the node's cached answer (apiVersionsCache) and
// refuses anything else: nothing an unauthenticated client sends reaches
// the upstream, which is dialled only for the first request that must
// reach it.
type terminateAuth struct {
	saslProgress
	authn *auth.Authenticator
}

// frameLimit bounds frames to a token plus a header until the client
// first authenticated.
func (t *terminateAuth) frameLimit(configured int32) int32 {
	if !t.done.Load() {
		return min(configured, maxUnauthenticatedFrame)
	}
	return configured
}

func (t *terminateAuth) token(cr *bufio.Reader, frameLen int) (clientRequest, bool, error) {
	if !t.authn.ExpectUnframed() {
		return clientRequest{}, false, nil
	}
	if err := checkSASLFrame(frameLen); err != nil {
		return clientRequest{}, true, err
	}
	token, err := readFrame(nil, cr, frameLen)
	if err != nil {
		return clientRequest{}, true, err
	}
	out, done, err := t.authn.Unframed(token[protocol.FrameSizeLen:])
	if err != nil {
		// A v0 client cannot be told why: close, as a broker does.
		t.p.s.countSASL(t.authn.Mechanism(), labels.Failure)
		return clientRequest{}, true, fail(reasonAuth, fmt.Errorf("SASL (v0 handshake): %w", err))
	}
	if done {
		t.loggedIn()
	}
	answer := append(protocol.AppendFrameSize(nil, len(out)), out...)
	return clientRequest{frameLen: frameLen, frame: token, owed: pending{local: answer}, expected: true}, true, nil
}

// request answers SaslHandshake and SaslAuthenticate, and ApiVersions
// before authentication; other requests pass only when the Authenticator
// admits them: not before authentication, during a re-authentication or
// after the session lifetime (KIP-368, any client version), as a broker
// does.
func (t *terminateAuth) request(h protocol.RequestHeader, cr *bufio.Reader, r clientRequest) (clientRequest, error) {
	switch h.APIKey {
	case wire.SASLHandshakeKey, wire.SASLAuthenticateKey:
		return t.answerSASL(h, cr, r)
	case wire.APIVersionsKey:
		if !t.authn.Authenticated() && r.owed.local == nil {
			return t.answerAPIVersions(h, cr, r)
		}
	}
	if err := t.authn.Admit(h.APIKey); err != nil {
		return r, fail(reasonAuth, err)
	}
	return r, nil
}

// answerSASL answers a SaslHandshake or SaslAuthenticate request. A
// refused one closes the pair once the client has read why, as with a
// broker.
func (t *terminateAuth) answerSASL(h protocol.RequestHeader, cr *bufio.Reader, r clientRequest) (clientRequest, error) {
	frame, req, err := readSASLRequest(h, cr, r.frameLen)
	if err != nil {
		return r, err
	}
	var resp kmsg.Response
	var failure error
	switch req := req.(type) {
	case *kmsg.SASLHandshakeRequest:
		hs := t.authn.Handshake(req)
		if hs.ErrorCode != 0 {
			t.p.s.countSASL(req.Mechanism, labels.Failure)
			failure = fmt.Errorf("SaslHandshake for mechanism %q refused with error %d", req.Mechanism, hs.ErrorCode)
		}
		resp = hs
	case *kmsg.SASLAuthenticateRequest:
		ar, done, err := t.authn.Authenticate(req)
		if err != nil {
			t.p.s.countSASL(t.authn.Mechanism(), labels.Failure)
			failure = err
		} else if done {
			t.loggedIn()
		}
		resp = ar
	}
	r.frame = frame
	r.owed.local = protocol.AppendResponseFrame(nil, h.CorrelationID, resp)
	if failure != nil {
		r.closeAfter = fail(reasonAuth, failure)
	}
	return r, nil
}

// answerAPIVersions answers the ApiVersions request of a client that has
// not authenticated from the node's cached answer, at the version it asked
// for: nothing such a client sends reaches the upstream. It returns the
// frame it read. As a broker does, a v3+ request whose client software
// name or version is malformed gets INVALID_REQUEST.
func (t *terminateAuth) answerAPIVersions(h protocol.RequestHeader, cr *bufio.Reader, r clientRequest) (clientRequest, error) {
	p := t.p
	frame, req, err := readSASLRequest(h, cr, r.frameLen)
	if err != nil {
		return r, err
	}
	r.frame = frame
	if req := req.(*kmsg.ApiVersionsRequest); h.APIVersion >= 3 && !(validSoftwareField(req.ClientSoftwareName) && validSoftwareField(req.ClientSoftwareVersion)) {
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.SetVersion(h.APIVersion)
		resp.ErrorCode = wire.ErrCodeInvalidRequest
		r.owed.local = protocol.AppendResponseFrame(nil, h.CorrelationID, resp)
		return r, nil
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
		return r, fail(reasonDial, fmt.Errorf("ApiVersions before SASL authentication: %w", err))
	}
	r.owed.local = apiVersionsAnswer(resp, h.APIVersion, h.CorrelationID)
	return r, nil
}

// upstreamConnected refreshes the node's cached ApiVersions answer when it
// is stale: nothing of the client's is on the fresh connection yet, so
// kproxy's own request keeps the answer for unauthenticated clients
// current.
func (t *terminateAuth) upstreamConnected(ctx context.Context, conn net.Conn) error {
	s, node := t.p.s, t.p.nodeID
	if !s.apiVersions.claimRefresh(node) {
		return nil
	}
	resp, err := s.requestAPIVersions(ctx, conn)
	s.apiVersions.refreshDone(node)
	if err != nil {
		return err
	}
	s.apiVersions.store(node, resp)
	return nil
}

// loggedIn records a completed SASL exchange: the pair's user and its
// logger follow it.
func (t *terminateAuth) loggedIn() {
	p := t.p
	t.finish()
	p.s.countSASL(t.authn.Mechanism(), labels.Success)
	p.conn.Claims = t.authn.Claims()
	if p.conn.User != t.authn.User() {
		p.conn.User = t.authn.User()
		p.setLogger(p.logger().With().Str("user", p.conn.User).Logger())
	}
	ev := p.logger().Debug().Str("mechanism", t.authn.Mechanism())
	if exp := t.authn.SessionExpiry(); !exp.IsZero() {
		ev = ev.Time("session_expiry", exp)
	}
	ev.Msg("SASL authenticated")
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
