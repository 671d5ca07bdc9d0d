package kms

import "errors"

// The classes of a Provider's errors, tested with errors.Is. Every error a
// Provider or DataKeys returns is in exactly one of them.
var (
	// ErrKeyUnavailable: the KEK does not exist, is disabled or is pending
	// deletion (on Decrypt AWS says "access denied" for a deleted key). Retrying does not help; on produce it is what
	// on_missing_key decides on, on fetch the records are unreadable
	// (crypto-shredding).
	ErrKeyUnavailable = errors.New("kms key unavailable")
	// ErrRetriable: the KMS could not be reached in time, throttled the
	// call or failed on its side. The same call may succeed later.
	ErrRetriable = errors.New("kms unavailable")
	// ErrRejected: the KMS refused the call for good: access denied when
	// generating, a malformed key name, a wrapped DEK that is corrupt.
	// Access denied when generating is not ErrKeyUnavailable on purpose: a
	// broken permission must not let on_missing_key: passthrough forward
	// records in the clear.
	ErrRejected = errors.New("kms rejected the request")
)
