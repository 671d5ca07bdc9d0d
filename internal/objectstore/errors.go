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

// classify marks err as being of class, keeping err's message and chain.
func classify(class, err error) error {
	if err == nil {
		return nil
	}
	return &classified{class: class, err: err}
}

type classified struct{ class, err error }

func (c *classified) Error() string   { return c.class.Error() + ": " + c.err.Error() }
func (c *classified) Unwrap() []error { return []error{c.class, c.err} }
