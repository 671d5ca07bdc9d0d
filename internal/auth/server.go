package auth

import "fmt"

// Session is the server side of one SASL authentication exchange.
//
// Step takes the client's next message and returns the server's answer.
// done is true, with a nil error, once the client is authenticated; serverMsg
// is then the last message to send (possibly empty). A non-nil error ends
// the exchange: it wraps ErrAuthenticationFailed (as an *AuthenticationError)
// for wrong credentials, unknown users and malformed messages, or
// ErrIllegalState for a Step after the exchange ended. Error messages never
// contain what the client sent beyond its user name.
//
// A Session is used by one connection and is not safe for concurrent use.
type Session interface {
	Step(clientMsg []byte) (serverMsg []byte, done bool, err error)
	// User is the authenticated user once Step has returned done, and ""
	// before that or after a failure.
	User() string
	// Mechanism is the session's SASL mechanism name.
	Mechanism() string
}

// NewServer starts a server session for a mechanism that verifies
// against store (Plain, ScramSHA256 or ScramSHA512).
func NewServer(mechanism string, store CredentialStore) (Session, error) {
	if store == nil {
		return nil, fmt.Errorf("new %s server: nil credential store", mechanism)
	}
	m, ok := (*Mechanisms)(nil).Server(mechanism)
	if !ok || m.Needs != NeedsUsers {
		return nil, fmt.Errorf("new server: %w %q", ErrUnsupportedMechanism, mechanism)
	}
	return m.start(Options{Store: store}), nil
}
