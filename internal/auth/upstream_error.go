package auth

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kproxy/kproxy/internal/wire"
)

// UpstreamError is an error code the upstream answered a SASL request
// with. It unwraps to the matching kerr error and, for the SASL codes, to
// ErrAuthenticationFailed, ErrUnsupportedMechanism or ErrIllegalState.
type UpstreamError struct {
	Request   string // "SaslHandshake" or "SaslAuthenticate"
	Mechanism string
	Code      int16
	// Message is the upstream's error message, if it sent one.
	Message string
	// Supported is what a SaslHandshake response listed.
	Supported []string
}

func (e *UpstreamError) Error() string {
	s := fmt.Sprintf("upstream %s (%s): %s (%d)", e.Request, e.Mechanism, kerr.TypedErrorForCode(e.Code).Message, e.Code)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if len(e.Supported) > 0 {
		s += fmt.Sprintf(" (upstream offers %v)", e.Supported)
	}
	return s
}

// Unwrap lets errors.Is match both kerr errors and this package's sentinels.
func (e *UpstreamError) Unwrap() []error {
	errs := []error{kerr.ErrorForCode(e.Code)}
	switch e.Code {
	case wire.ErrCodeSASLAuthenticationFailed:
		errs = append(errs, ErrAuthenticationFailed)
	case wire.ErrCodeUnsupportedSASLMechanism:
		errs = append(errs, ErrUnsupportedMechanism)
	case wire.ErrCodeIllegalSASLState:
		errs = append(errs, ErrIllegalState)
	}
	return errs
}
