package testkit

import (
	"context"
	"testing"
	"time"
)

// Context returns a context that ends after d, or when the test ends,
// whichever comes first: a bound on how long a test may wait for a client.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
