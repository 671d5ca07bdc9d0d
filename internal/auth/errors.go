package auth

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers classify failures with errors.Is.
var (
	// ErrAuthenticationFailed: the client's credentials were wrong, its user
	// unknown, or its message malformed. Kafka answers all of these with
	// SASL_AUTHENTICATION_FAILED.
	ErrAuthenticationFailed = errors.New("authentication failed")
	// ErrUnsupportedMechanism: the mechanism is not implemented or not
	// enabled.
	ErrUnsupportedMechanism = errors.New("unsupported SASL mechanism")
	// ErrIllegalState: a SASL message arrived when none of its kind was
	// expected (Kafka's ILLEGAL_SASL_STATE).
	ErrIllegalState = errors.New("illegal SASL state")
	// ErrSessionExpired: the KIP-368 session lifetime is over and the
	// client did not re-authenticate; a broker closes the connection.
	ErrSessionExpired = errors.New("SASL session expired")
	// ErrUnmappablePrincipal: in passthrough mode, kproxy cannot tell which
	// principal the broker will authenticate from the client's first SASL
	// message (a delegation token, a message outside Kafka's grammar, a
	// mechanism kproxy does not read); the connection must be refused.
	ErrUnmappablePrincipal = errors.New("broker's principal cannot be determined")
)

// AuthenticationError is a failed authentication. It unwraps to
// ErrAuthenticationFailed. Its message names the mechanism, the user (when
// the client got far enough to name one) and a reason meant for kproxy's
// logs; it never holds a secret. The reason tells "unknown user" from "wrong
// password", so it must not be sent to the client.
type AuthenticationError struct {
	Mechanism string
	// User is the user the client claimed, "" if it never named one.
	User string
	// Reason says what failed, for operators.
	Reason string
}

func (e *AuthenticationError) Error() string {
	if e.User == "" {
		return fmt.Sprintf("%s authentication failed: %s", e.Mechanism, e.Reason)
	}
	return fmt.Sprintf("%s authentication failed for user %q: %s", e.Mechanism, e.User, e.Reason)
}

// Unwrap makes errors.Is(err, ErrAuthenticationFailed) hold.
func (e *AuthenticationError) Unwrap() error { return ErrAuthenticationFailed }

func failed(mechanism, user, reason string) error {
	return &AuthenticationError{Mechanism: mechanism, User: user, Reason: reason}
}
