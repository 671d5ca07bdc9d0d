package testkit

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Consume polls cl until it has n records and returns them, failing the
// test on a fetch error or when ctx ends first.
func Consume(t testing.TB, ctx context.Context, cl *kgo.Client, n int) []*kgo.Record {
	t.Helper()
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(got), n, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		got = append(got, fs.Records()...)
	}
	return got
}
