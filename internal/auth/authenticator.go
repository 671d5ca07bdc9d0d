package auth

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// MaxTokenSize is the largest SASL token kproxy reads before a client is
// authenticated: Kafka's sasl.server.max.receive.size default. The proxy
// should apply it as the frame limit of unauthenticated connections, so
// that an anonymous peer cannot make it allocate more.
const MaxTokenSize = 512 << 10

// Options configure the Authenticators of one listener.
type Options struct {
	// Mechanisms are the enabled mechanisms, in the order a client that
	// asks for another one is told them.
	Mechanisms []string
	// Table holds the mechanisms that may be enabled; nil: the built-in
	// ones.
	Table *Mechanisms
	// Store verifies PLAIN and SCRAM logins; required when one is enabled.
	Store CredentialStore
	// OAuthBearer validates OAUTHBEARER tokens; required when it is
	// enabled. An OAUTHBEARER session never outlives its token: its
	// lifetime is the token's remaining lifetime, capped by
	// SessionLifetime when that is set.
	OAuthBearer TokenValidator
	// SessionLifetime, when positive, is the KIP-368 session lifetime
	// (Kafka's connections.max.reauth.ms): every session ends that long
	// after each successful (re-)authentication, whatever versions the
	// client used. Clients that authenticate with SaslAuthenticate v1 or
	// later are told it and may re-authenticate in place; a client using
	// v0 (or the v0 handshake) cannot be told and is closed at its first
	// request after the end, as Kafka closes it.
	SessionLifetime time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Authenticator terminates SASL for one client connection: it answers
// SaslHandshake and SaslAuthenticate requests (and, after a v0 handshake,
// the unframed tokens that follow it) the way a broker does, without any
// I/O. It is not safe for concurrent use.
//
// Contract for the proxy: after any response with a non-zero error code,
// or any non-nil error, write the response (if there is one) and close the
// connection, as a broker does. Pass SaslHandshake and SaslAuthenticate
// requests to Handshake and Authenticate, and forward any other request
// only if Admit allows it.
type Authenticator struct {
	opts Options

	state     authState
	session   Session
	reauth    bool   // the current exchange re-authenticates an earlier one
	mechanism string // of the last successful or current exchange
	user      string // of the last successful exchange
	claims    map[string][]string
	expiry    time.Time
	lifetime  time.Duration // of the last successful exchange's session; 0: unlimited
	// reauthStart is when the last re-authentication began; zero before
	// the first.
	reauthStart time.Time
}

// minReauthInterval is Kafka's KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND:
// a re-authentication may not begin sooner after the previous one began,
// so that a client cannot make the server hash passwords in a loop on one
// connection.
const minReauthInterval = time.Second

type authState int

const (
	stateBegin    authState = iota // awaiting SaslHandshake
	stateFramed                    // awaiting SaslAuthenticate
	stateUnframed                  // after a v0 handshake: awaiting raw tokens
	stateComplete                  // authenticated
	stateFailed                    // the connection must close
)

// NewAuthenticator checks opts and returns an Authenticator for one
// connection.
func NewAuthenticator(opts Options) (*Authenticator, error) {
	if len(opts.Mechanisms) == 0 {
		return nil, errors.New("authenticator: no mechanisms enabled")
	}
	for _, name := range opts.Mechanisms {
		m, ok := opts.Table.Server(name)
		switch {
		case !ok:
			return nil, fmt.Errorf("authenticator: %w %q", ErrUnsupportedMechanism, name)
		case m.Needs == NeedsOAuthBearer && opts.OAuthBearer == nil:
			return nil, fmt.Errorf("authenticator: %s enabled without a token validator", name)
		case m.Needs == NeedsUsers && opts.Store == nil:
			return nil, errors.New("authenticator: nil credential store")
		}
	}
	if opts.SessionLifetime < 0 {
		return nil, fmt.Errorf("authenticator: negative session lifetime %s", opts.SessionLifetime)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Table = opts.Table.orBuiltin()
	opts.Mechanisms = slices.Clone(opts.Mechanisms)
	return &Authenticator{opts: opts}, nil
}

// Handshake answers a SaslHandshake request at its version. Every response
// lists the enabled mechanisms. A mechanism that is not enabled gets
// UNSUPPORTED_SASL_MECHANISM; a handshake out of turn gets
// ILLEGAL_SASL_STATE. A handshake on an authenticated connection is a
// KIP-368 re-authentication, allowed only when the session has a lifetime,
// only with v1 and the same mechanism, and not within a second of the
// previous re-authentication's start. As with Kafka it may begin even
// after the session ended (it is the one request an expired session may
// still send), and once begun it may finish after the end.
//
// After a v0 handshake the client sends raw size-prefixed tokens rather
// than SaslAuthenticate requests: see ExpectUnframed and Unframed.
func (a *Authenticator) Handshake(req *kmsg.SASLHandshakeRequest) *kmsg.SASLHandshakeResponse {
	resp := &kmsg.SASLHandshakeResponse{Version: req.Version, SupportedMechanisms: slices.Clone(a.opts.Mechanisms)}
	fail := func(code int16) *kmsg.SASLHandshakeResponse {
		a.state, a.session = stateFailed, nil
		resp.ErrorCode = code
		return resp
	}
	switch {
	case a.state == stateBegin:
		a.reauth = false
	case a.state == stateComplete && !a.expiry.IsZero() && req.Version >= 1:
		now := a.opts.Now()
		if req.Mechanism != a.mechanism || (!a.reauthStart.IsZero() && now.Sub(a.reauthStart) < minReauthInterval) {
			return fail(wire.ErrCodeIllegalSASLState)
		}
		a.reauth, a.reauthStart = true, now
	default:
		return fail(wire.ErrCodeIllegalSASLState)
	}
	if !slices.Contains(a.opts.Mechanisms, req.Mechanism) {
		return fail(wire.ErrCodeUnsupportedSASLMechanism)
	}
	s, err := a.newSession(req.Mechanism)
	if err != nil { // unreachable: mechanisms were checked in NewAuthenticator
		return fail(wire.ErrCodeUnsupportedSASLMechanism)
	}
	a.session, a.mechanism = s, req.Mechanism
	a.state = stateFramed
	if req.Version == 0 {
		a.state = stateUnframed
	}
	return resp
}

// Authenticate answers a SaslAuthenticate request at its version. done is
// true once the client is authenticated. On failure the response carries
// SASL_AUTHENTICATION_FAILED (wrong credentials, unknown user, malformed
// token) or ILLEGAL_SASL_STATE (out of turn) with a message for the client
// that names the mechanism only, and err says more, for kproxy's log.
//
// On success with a configured lifetime SessionExpiry is set, at any
// version; from v1 on the response also carries session_lifetime_ms.
func (a *Authenticator) Authenticate(req *kmsg.SASLAuthenticateRequest) (*kmsg.SASLAuthenticateResponse, bool, error) {
	resp := &kmsg.SASLAuthenticateResponse{Version: req.Version}
	if a.state != stateFramed {
		expecting := a.state.expecting()
		a.state, a.session = stateFailed, nil
		resp.ErrorCode = wire.ErrCodeIllegalSASLState
		resp.ErrorMessage = kmsg.StringPtr("SaslAuthenticate out of turn: " + expecting)
		return resp, false, fmt.Errorf("SaslAuthenticate: %w: %s", ErrIllegalState, expecting)
	}
	out, done, err := a.step(req.SASLAuthBytes)
	if err != nil {
		resp.ErrorCode = wire.ErrCodeSASLAuthenticationFailed
		msg := "Authentication failed: invalid credentials with SASL mechanism " + a.mechanism
		if errors.Is(err, ErrIllegalState) {
			resp.ErrorCode = wire.ErrCodeIllegalSASLState
			msg = "illegal SASL state"
		}
		resp.ErrorMessage = &msg
		return resp, false, err
	}
	resp.SASLAuthBytes = out
	if done && req.Version >= 1 {
		resp.SessionLifetimeMillis = a.lifetime.Milliseconds()
	}
	return resp, done, nil
}

// ExpectUnframed reports whether the next bytes from the client are a raw
// SASL token (a 4-byte big-endian size and the token, no request header),
// which is the case after a v0 SaslHandshake until authentication ends.
func (a *Authenticator) ExpectUnframed() bool { return a.state == stateUnframed }

// Unframed takes one raw token (without its size prefix) after a v0
// handshake and returns the raw token to answer with, which the proxy
// writes behind a 4-byte big-endian size (protocol.AppendFrameSize); an
// empty token is still written, as a broker writes it. A v0 client cannot
// be told why authentication failed: on error, close the connection.
func (a *Authenticator) Unframed(token []byte) ([]byte, bool, error) {
	if a.state != stateUnframed {
		err := fmt.Errorf("unframed SASL token: %w: %s", ErrIllegalState, a.state.expecting())
		a.state, a.session = stateFailed, nil
		return nil, false, err
	}
	out, done, err := a.step(token)
	if err != nil {
		return nil, false, err
	}
	if out == nil {
		out = []byte{}
	}
	return out, done, nil
}

// step runs the session and moves the state on.
func (a *Authenticator) step(token []byte) ([]byte, bool, error) {
	if len(token) > MaxTokenSize {
		a.state, a.session = stateFailed, nil
		return nil, false, failed(a.mechanism, "", fmt.Sprintf("token of %d bytes exceeds %d", len(token), MaxTokenSize))
	}
	out, done, err := a.session.Step(token)
	if err != nil {
		a.state, a.session = stateFailed, nil
		return nil, false, err
	}
	if !done {
		return out, false, nil
	}
	user := a.session.User()
	// KIP-368: a re-authentication must keep the principal.
	if a.reauth && user != a.user {
		a.state, a.session = stateFailed, nil
		return nil, false, failed(a.mechanism, user, fmt.Sprintf("re-authentication as a different user than %q", a.user))
	}
	// Kafka computes the lifetime on every path, framed or not: a client
	// that cannot be told it still expires.
	a.lifetime = a.sessionLifetime(a.session)
	a.expiry = time.Time{}
	if a.lifetime > 0 {
		a.expiry = a.opts.Now().Add(a.lifetime)
	}
	a.claims = nil
	if c, ok := a.session.(interface{ Claims() map[string][]string }); ok {
		a.claims = c.Claims()
	}
	a.state, a.session, a.user = stateComplete, nil, user
	return out, true, nil
}

// minTokenSession is the shortest session a token that is valid (within
// the clock skew) gets: a token at or past its exp still authenticates one
// request, as with Kafka, and the client is told to re-authenticate
// within the second.
const minTokenSession = time.Millisecond

// sessionLifetime is the KIP-368 lifetime of the session s just
// authenticated: the configured one, shortened to the remaining life of
// the credential for a session whose credential expires (a token).
func (a *Authenticator) sessionLifetime(s Session) time.Duration {
	lifetime := a.opts.SessionLifetime
	e, ok := s.(interface{ Expiry() time.Time })
	if !ok || e.Expiry().IsZero() {
		return lifetime
	}
	remaining := max(e.Expiry().Sub(a.opts.Now()), minTokenSession)
	if lifetime <= 0 {
		return remaining
	}
	return min(lifetime, remaining)
}

// newSession starts the server side of mechanism.
func (a *Authenticator) newSession(mechanism string) (Session, error) {
	m, ok := a.opts.Table.Server(mechanism)
	if !ok {
		return nil, fmt.Errorf("new session: %w %q", ErrUnsupportedMechanism, mechanism)
	}
	return m.start(a.opts), nil
}

// Authenticated reports whether the client has authenticated and no
// exchange has failed since. It stays true during a re-authentication.
func (a *Authenticator) Authenticated() bool {
	return a.user != "" && a.state != stateFailed
}

// User is the authenticated user, "" before authentication.
func (a *Authenticator) User() string { return a.user }

// Claims are the claims of the token the client last authenticated with
// (OAUTHBEARER), nil for other mechanisms. The map is not modified later:
// a re-authentication replaces it.
func (a *Authenticator) Claims() map[string][]string { return a.claims }

// Mechanism is the mechanism of the current or last exchange.
func (a *Authenticator) Mechanism() string { return a.mechanism }

// SessionExpiry is when the session ends unless the client re-authenticates;
// zero when it never does.
func (a *Authenticator) SessionExpiry() time.Time { return a.expiry }

// Admit decides whether a request with apiKey other than SaslHandshake and
// SaslAuthenticate may be forwarded; a non-nil error says why the proxy
// must close the connection instead. As Kafka's SocketServer decides:
//   - before authentication, only ApiVersions;
//   - during a re-authentication, nothing: only its SaslAuthenticate
//     requests;
//   - once the session has ended, nothing, ApiVersions included: only a
//     SaslHandshake that begins a re-authentication.
func (a *Authenticator) Admit(apiKey int16) error {
	switch {
	case a.state == stateFailed:
		return fmt.Errorf("%s request: %w: authentication failed", protocol.APIName(apiKey), ErrIllegalState)
	case a.user == "":
		if apiKey == wire.APIVersionsKey {
			return nil
		}
		return fmt.Errorf("%s request before SASL authentication: %w", protocol.APIName(apiKey), ErrIllegalState)
	case a.state != stateComplete:
		return fmt.Errorf("%s request during SASL re-authentication: %w", protocol.APIName(apiKey), ErrIllegalState)
	case !a.expiry.IsZero() && !a.opts.Now().Before(a.expiry):
		return fmt.Errorf("%s request: %w: SASL session expired %s ago without re-authentication (KIP-368)",
			protocol.APIName(apiKey), ErrSessionExpired, a.opts.Now().Sub(a.expiry).Round(time.Millisecond))
	}
	return nil
}

// expecting says, for messages, what the state allows next.
func (s authState) expecting() string {
	switch s {
	case stateBegin:
		return "expecting SaslHandshake"
	case stateFramed:
		return "expecting SaslAuthenticate"
	case stateUnframed:
		return "expecting an unframed token after a v0 SaslHandshake"
	case stateComplete:
		return "already authenticated"
	}
	return "authentication already failed"
}
