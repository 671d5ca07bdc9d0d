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
