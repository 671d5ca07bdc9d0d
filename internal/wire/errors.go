package wire

import "errors"

// Errors returned by the parsers. Callers close the offending connection.
var (
	ErrUnknownAPIKey      = errors.New("unknown API key")
	ErrUnsupportedVersion = errors.New("unsupported API version")
	ErrMalformed          = errors.New("malformed message")
)

// ErrorCode is a Kafka protocol error code.
type ErrorCode = int16

// The Kafka error codes kproxy synthesizes itself.
const (
	ErrNone                                   ErrorCode = 0
	ErrCodeCorruptMessage                     ErrorCode = 2
	ErrCodeNotCoordinator                     ErrorCode = 16
	ErrCodeInvalidRequiredAcks                ErrorCode = 21
	ErrCodeTopicAuthorizationFailed           ErrorCode = 29
	ErrCodeGroupAuthorizationFailed           ErrorCode = 30
	ErrCodeClusterAuthorizationFailed         ErrorCode = 31
	ErrCodeUnsupportedSASLMechanism           ErrorCode = 33
	ErrCodeIllegalSASLState                   ErrorCode = 34
	ErrCodeUnsupportedVersion                 ErrorCode = 35
	ErrCodeInvalidRequest                     ErrorCode = 42
	ErrCodePolicyViolation                    ErrorCode = 44
	ErrCodeTransactionalIDAuthorizationFailed ErrorCode = 53
	ErrCodeSASLAuthenticationFailed           ErrorCode = 58
)
