package engine

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestPrincipalLabelIsCapped: with metrics.principal_limit 2, the first
// two principals get series of their own and every later one is counted
// as "other"; without it there is no principal series at all.
func TestPrincipalLabelIsCapped(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newRequestMetrics(reg, 2)
	for _, p := range []string{"alice", "bob", "carol", "alice", "dave"} {
		m.ObserveRequest(&RequestTiming{Key: int16(kmsg.Produce), Principal: p, ErrorCode: -1})
	}
	for p, want := range map[string]float64{"alice": 2, "bob": 1, "other": 2, "carol": 0, "dave": 0} {
		if got := principalRequests(t, reg, p); got != want {
			t.Errorf("principal %q: %v requests, want %v", p, got, want)
		}
	}

	off := prometheus.NewRegistry()
	newRequestMetrics(off, 0).ObserveRequest(&RequestTiming{Key: int16(kmsg.Produce), Principal: "alice", ErrorCode: -1})
	families, err := off.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "kproxy_principal_requests_total" {
			t.Errorf("principal series without metrics.principal_limit: %v", f)
		}
	}
}

func principalRequests(t *testing.T, g prometheus.Gatherer, principal string) float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if f.GetName() == "kproxy_principal_requests_total" && m.GetLabel()[0].GetValue() == principal {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
