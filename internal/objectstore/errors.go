package objectstore

import "errors"

// The classes of the store's errors, tested with errors.Is. Every error
// Put, Get and Delete return is in exactly one of them.
var (
	// ErrMissing: the object does not exist (deleted, expired by a
	// lifecycle rule, or never written). Retrying does not help.
	ErrMissing = errors.New("object missing")
	// ErrRetriable: the store could not be reached in time, throttled the
	// call or failed on its side. The same call may succeed later.
	ErrRetriable = errors.New("object store unavailable")
	// ErrRejected: the store refused the call for good (wrong
	// credentials, access denied, no such bucket), or the value was not
	// what its size said.
	ErrRejected = errors.New("object store rejected the request")
)
