package e2esecurity

import (
	"sync/atomic"
	"testing"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// registrations counts the calls of its Register.
type registrations struct{ n *atomic.Int32 }

func (f registrations) Register(*filter.Registry) { f.n.Add(1) }

// A filter is registered once, also in SASL terminate mode, where kproxy
// adds a handler of its own (the SASL versions it advertises) once it
// knows the mode.
func TestFilterRegisteredOnceInTerminateMode(t *testing.T) {
	p := certs.New(t)
	cluster := secureUpstream(t, p)
	var n atomic.Int32
	kproxytest.Start(t, proxyYAML(t, p, cluster.ListenAddrs(), "none", "terminate"), kproxytest.WithFilters(registrations{&n}))
	if got := n.Load(); got != 1 {
		t.Fatalf("Register called %d times, want 1", got)
	}
}
