package envelope

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Errors the package wraps, for errors.Is.
var (
	// ErrMalformed: envelope bytes no sealer writes (a marker or sealed
	// part that is short, has trailing bytes or unknown flags).
	ErrMalformed = errors.New("malformed encryption envelope")
	// ErrUnsupportedVersion: a marker whose format version this build
	// cannot read.
	ErrUnsupportedVersion = errors.New("unsupported encryption envelope version")
	// ErrAuthentication: the ciphertext does not authenticate under the
	// key and the record's context: a wrong DEK, a tampered byte, or a
	// part moved to another topic, header or record part.
	ErrAuthentication = errors.New("encryption envelope does not authenticate")
	// ErrDEKExhausted: the Sealer has sealed MaxSealsPerDEK parts; the
	// caller must fetch a new DEK (retriable for the producer).
	ErrDEKExhausted = errors.New("data key exhausted")
	// ErrInvalidDEK: a DEK whose fields do not fit the format.
	ErrInvalidDEK = errors.New("invalid data key")
)

// ClientMarkerError is the per-partition error a produce gets when one of
// its records already carries the marker header (see IsMarker):
// INVALID_RECORD, not retriable, since retrying the same records cannot
// succeed. Forwarding such a record would plant a record the fetch path
// refuses to hand over (a poison record for every consumer), and
// stripping the header would drop data silently, so the record is refused.
var ClientMarkerError = kerr.InvalidRecord
