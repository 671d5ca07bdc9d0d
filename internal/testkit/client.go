package testkit

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Client is a franz-go client made from opts, closed when the test ends.
func Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatalf("kgo client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}
