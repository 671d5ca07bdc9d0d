package engine

import (
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/bench/relaytest"
	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/wire"
)

// inspectingFilter decides every Produce from its raw body with verdict
// when decide is set, and counts both calls.
type inspectingFilter struct {
	decide           bool
	verdict          filter.Verdict
	inspected, whole atomic.Int32
	sawBody          atomic.Bool
}

func (f *inspectingFilter) Register(r *filter.Registry) {
	filter.OnRequest(r, f.produce, filter.DecideRaw(f.decideRaw))
}

func (f *inspectingFilter) produce(*filter.Conn, *kmsg.ProduceRequest) filter.Verdict {
	f.whole.Add(1)
	return filter.Verdict{}
}

func (f *inspectingFilter) decideRaw(_ *filter.Conn, version int16, body []byte) (filter.Verdict, bool) {
	f.inspected.Add(1)
	var s wire.ProduceSummary
	if s.Parse(version, body) == nil && s.Topics() == 1 {
		f.sawBody.Store(true)
	}
	return f.verdict, f.decide
}

// A filter that decides from the raw body is not given the decoded
// request, and the request still reaches the upstream and is answered; one
// that does not decide, or decides with a verdict that needs a decoded
// request, gets the decoded request as before.
func TestDecideRawSkipsTheDecode(t *testing.T) {
	be, err := relaytest.NewBackend(relaytest.Produce64K)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.Close)
	const n = 20
	for name, tc := range map[string]struct {
		f         *inspectingFilter
		wantWhole int32
	}{
		"decided":            {&inspectingFilter{decide: true}, 0},
		"undecided":          {&inspectingFilter{}, n},
		"decided but modify": {&inspectingFilter{decide: true, verdict: filter.Verdict{Modified: true}}, n},
	} {
		s := startBenchProxy(t, be.Addr(), WithFilters(tc.f))
		if err := relaytest.Check(s.BootstrapAddr(), relaytest.Produce64K, n); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := tc.f.inspected.Load(); got != n || !tc.f.sawBody.Load() {
			t.Errorf("%s: inspected %d of %d requests (saw the body: %v)", name, got, n, tc.f.sawBody.Load())
		}
		if got := tc.f.whole.Load(); got != tc.wantWhole {
			t.Errorf("%s: typed handler called %d times, want %d", name, got, tc.wantWhole)
		}
	}
}
