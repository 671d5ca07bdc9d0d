package kms

import (
	"errors"

	"github.com/aws/smithy-go"
	"github.com/kproxy/kproxy/internal/errclass"
)

// classifyAWS puts an SDK error into one of the classes. An error without
// an API error code never got an answer from KMS (connection refused,
// timeout, DNS): retriable. Server faults are retriable; client faults are
// not, but for throttling.
//
// On Decrypt AWS KMS answers AccessDeniedException for a blob whose key
// no longer exists, on purpose without saying whether it ever did: that
// is crypto-shredding, ErrKeyUnavailable. On GenerateDataKey access denied
// stays ErrRejected: a broken permission is not a missing key.
func classifyAWS(err error, decrypting bool) error {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return errclass.Mark(ErrRetriable, err)
	}
	code := api.ErrorCode()
	if decrypting && code == "AccessDeniedException" {
		return errclass.Mark(ErrKeyUnavailable, err)
	}
	switch code {
	case "NotFoundException", "DisabledException",
		"KMSInvalidStateException": // pending deletion, or a key of the wrong kind
		return errclass.Mark(ErrKeyUnavailable, err)
	case "ThrottlingException", "LimitExceededException", "RequestLimitExceeded",
		"KeyUnavailableException": // AWS: the key is temporarily unavailable
		return errclass.Mark(ErrRetriable, err)
	}
	if api.ErrorFault() == smithy.FaultServer {
		return errclass.Mark(ErrRetriable, err)
	}
	return errclass.Mark(ErrRejected, err)
}
