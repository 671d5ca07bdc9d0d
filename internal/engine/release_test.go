package engine

import (
	"slices"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/bench/relaytest"
	"github.com/kproxy/kproxy/filter"
)

// releasingFilter replaces each produced partition's records by a copy
// and asks for the copies back with Verdict.Release; hook adds a
// response hook, which may read the request when the response comes.
type releasingFilter struct {
	hook     bool
	released atomic.Int32
	requests atomic.Int32
}

func (f *releasingFilter) Register(r *filter.Registry) { filter.OnRequest(r, f.produce) }

func (f *releasingFilter) produce(_ *filter.Conn, req *kmsg.ProduceRequest) filter.Verdict {
	f.requests.Add(1)
	for ti := range req.Topics {
		for pi := range req.Topics[ti].Partitions {
			p := &req.Topics[ti].Partitions[pi]
			p.Records = slices.Clone(p.Records)
		}
	}
	v := filter.Verdict{Modified: true, Release: func() { f.released.Add(1) }}
	if f.hook {
		v.OnResponse = func(kmsg.Response) error { return nil }
	}
	return v
}

// A modified request's Release is called once per request, once it is
// encoded, and never while a response hook may still read the request.
func TestReleaseAfterEncoding(t *testing.T) {
	be, err := relaytest.NewBackend(relaytest.Produce64K)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.Close)
	const n = 20
	for name, tc := range map[string]struct {
		f    *releasingFilter
		want int32
	}{
		"no hook":   {&releasingFilter{}, n},
		"with hook": {&releasingFilter{hook: true}, 0},
	} {
		s := startBenchProxy(t, be.Addr(), WithFilters(tc.f))
		if err := relaytest.Check(s.BootstrapAddr(), relaytest.Produce64K, n); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, reqs := tc.f.released.Load(), tc.f.requests.Load(); got != tc.want || reqs != n {
			t.Errorf("%s: released %d times for %d requests, want %d", name, got, reqs, tc.want)
		}
	}
}
