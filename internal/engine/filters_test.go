package engine

import (
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/bench/relaytest"
	"github.com/kproxy/kproxy/filter"
)

// produceLog is what typed Produce handlers saw: per decoded request, the
// names of the handlers that were given it, in the order they ran.
type produceLog struct {
	mu   sync.Mutex
	seen map[*kmsg.ProduceRequest][]string
	reqs []*kmsg.ProduceRequest // in arrival order
}

// produceNoter is a filter with one typed Produce handler that notes
// itself in log.
type produceNoter struct {
	name string
	log  *produceLog
}

func (f produceNoter) Register(r *filter.Registry) { filter.OnRequest(r, f.produce) }

func (f produceNoter) produce(_ *filter.Conn, req *kmsg.ProduceRequest) filter.Verdict {
	f.log.mu.Lock()
	defer f.log.mu.Unlock()
	if f.log.seen == nil {
		f.log.seen = map[*kmsg.ProduceRequest][]string{}
	}
	if _, ok := f.log.seen[req]; !ok {
		f.log.reqs = append(f.log.reqs, req)
	}
	f.log.seen[req] = append(f.log.seen[req], f.name)
	return filter.Verdict{}
}

// relayProduces sends n Produce64K requests through a proxy with opts to
// a backend that answers them, failing t unless each is answered.
func relayProduces(t *testing.T, n int, opts ...Option) *Server {
	t.Helper()
	be, err := relaytest.NewBackend(relaytest.Produce64K)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.Close)
	s := startBenchProxy(t, be.Addr(), opts...)
	if err := relaytest.Check(s.BootstrapAddr(), relaytest.Produce64K, n); err != nil {
		t.Fatal(err)
	}
	return s
}

// A typed handler is given each request of its key decoded as its type,
// with the client's version and contents.
func TestTypedHandlerGetsTheDecodedRequest(t *testing.T) {
	var log produceLog
	const n = 10
	relayProduces(t, n, WithFilters(produceNoter{"only", &log}))
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.reqs) != n {
		t.Fatalf("handler saw %d requests, want %d", len(log.reqs), n)
	}
	for _, req := range log.reqs {
		if req.Version != relaytest.Produce64K.Version || len(req.Topics) != 1 || req.Topics[0].Topic != relaytest.Topic {
			t.Fatalf("handler got v%d %+v, want v%d of topic %q", req.Version, req.Topics, relaytest.Produce64K.Version, relaytest.Topic)
		}
	}
}

// Two filters on one key run in the order they were added, on one
// decoding of each request: the second sees the very request the first
// did.
func TestFiltersOnOneKeyRunInOrderOnOneDecoding(t *testing.T) {
	var log produceLog
	const n = 10
	relayProduces(t, n, WithFilters(produceNoter{"first", &log}), WithFilters(produceNoter{"second", &log}))
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.reqs) != n {
		t.Fatalf("handlers saw %d distinct decoded requests, want %d (one per request)", len(log.reqs), n)
	}
	for _, req := range log.reqs {
		if got := log.seen[req]; len(got) != 2 || got[0] != "first" || got[1] != "second" {
			t.Fatalf("a decoded request was given to %v, want [first second]", got)
		}
	}
}

// peakGauge remembers the highest value the memory budget reported.
type peakGauge struct {
	prometheus.Gauge
	mu   sync.Mutex
	peak float64
}

func (g *peakGauge) Set(v float64) {
	g.mu.Lock()
	g.peak = max(g.peak, v)
	g.mu.Unlock()
	g.Gauge.Set(v)
}

func (g *peakGauge) max() float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.peak
}

// watchBudget makes the memory budget report to g too: everything a
// filter makes kproxy hold (a request read whole, a response buffered) is
// charged there.
func watchBudget(g *peakGauge) Option {
	return func(s *Server) { g.Gauge, s.budget.gauge = s.budget.gauge, g }
}

// unusedKeyFilter wants DeleteTopics requests and responses, which the
// produce-only client never sends.
type unusedKeyFilter struct{}

func (unusedKeyFilter) Register(r *filter.Registry) {
	filter.OnRequest(r, func(*filter.Conn, *kmsg.DeleteTopicsRequest) filter.Verdict { return filter.Verdict{} })
	filter.OnResponse(r, func(*kmsg.DeleteTopicsResponse) error { return nil })
}

// A filter on keys the client never uses leaves the client's requests
// streamed: no request is read whole (the produce responses, which address
// rewriting inspects, are a few bytes). A filter on Produce, the control,
// has each 64 KiB request held.
func TestFilterOnAnUnusedKeyLeavesOthersStreamed(t *testing.T) {
	requestSize := float64(relaytest.Produce64K.RequestRecords) // a request held is at least this
	for name, tc := range map[string]struct {
		f        filter.Filter
		streamed bool
	}{
		"unused key": {unusedKeyFilter{}, true},
		"produce":    {produceNoter{"produce", &produceLog{}}, false},
	} {
		g := &peakGauge{}
		relayProduces(t, 10, WithFilters(tc.f), watchBudget(g))
		if held := g.max() >= requestSize; held == tc.streamed {
			t.Errorf("%s: at most %.0f bytes held for filters; want a request held: %v", name, g.max(), !tc.streamed)
		}
	}
}

// A response hook of the wrong type fails that connection with an error:
// the client sees it closed, and kproxy does not panic.
type wrongHookFilter struct{}

func (wrongHookFilter) Register(r *filter.Registry) {
	filter.OnRequest(r, func(*filter.Conn, *kmsg.ProduceRequest) filter.Verdict {
		return filter.Verdict{OnResponse: filter.Then(func(*kmsg.MetadataResponse) error { return nil })}
	})
}

func TestWrongTypeHookClosesTheConnection(t *testing.T) {
	be, err := relaytest.NewBackend(relaytest.Ping)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.Close)
	s := startBenchProxy(t, be.Addr(), WithFilters(wrongHookFilter{}))
	if err := relaytest.Check(s.BootstrapAddr(), relaytest.Ping, 1); err == nil {
		t.Fatal("the produce was answered although its response hook takes a Metadata response")
	}
	// The proxy still serves: a new connection is refused the same way,
	// not met by a dead listener.
	if err := relaytest.Check(s.BootstrapAddr(), relaytest.Ping, 1); err == nil {
		t.Fatal("second connection answered")
	}
}

// A filter registering a type that names no key stops Start.
type interfaceFilter struct{}

func (interfaceFilter) Register(r *filter.Registry) {
	filter.OnRequest(r, func(*filter.Conn, kmsg.Request) filter.Verdict { return filter.Verdict{} })
}

func TestStartRefusesARegistrationError(t *testing.T) {
	s := New(benchProxyConfig(t, "127.0.0.1:1"), zerolog.Nop(), prometheus.NewRegistry(), WithFilters(interfaceFilter{}))
	if err := s.Start(t.Context()); err == nil {
		s.Shutdown(t.Context())
		t.Fatal("Start accepted a filter whose handler names no API key")
	}
}
