package idp

import "testing"

// StartTest is Start for a test: it fails t if the provider cannot start,
// and closes it when the test ends.
func StartTest(t testing.TB, opts Options) *IdP {
	t.Helper()
	p, err := Start(opts)
	if err != nil {
		t.Fatalf("start the identity provider: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}
