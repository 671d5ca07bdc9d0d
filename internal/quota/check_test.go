package quota_test

import (
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/quota"
)

// TestCheckSeesEveryConnectionOfThePrincipal: a fetch response that took
// a principal over its fetch quota on one connection leaves it over on
// every other, including one opened afterwards (a reconnecting client),
// until the rate is back within the quota; asking records nothing, so asking
// again and again does not lengthen the throttle.
func TestCheckSeesEveryConnectionOfThePrincipal(t *testing.T) {
	e := engine(t, "policy:\n  quotas: [{name: q, principals: [\"User:*\"], fetch_bytes_per_second: 100}]\n")
	first, _ := bind(t, e, "alice", "app")
	if th := first.Binding().Check(quota.Fetch, now); th != 0 {
		t.Fatalf("a fresh principal is over its quota: %v", th)
	}
	th := first.Binding().Record(quota.Fetch, 2000, now) // 2000 B over the 10 s span: twice the quota
	if th == 0 {
		t.Fatal("2000 B against 100 B/s over 10 s was not throttled")
	}
	e.Release(first)
	again, _ := bind(t, e, "alice", "app")
	other, _ := bind(t, e, "alice", "another-app")
	for i := 0; i < 3; i++ {
		if got := again.Binding().Check(quota.Fetch, now); got != th {
			t.Fatalf("a reconnected connection's check %d: %v, want the principal's throttle %v", i, got, th)
		}
	}
	if got := other.Binding().Check(quota.Fetch, now); got != th {
		t.Fatalf("another connection of the principal: %v, want %v", got, th)
	}
	// A single burst stays counted until its window is purged, samples ×
	// size after it (TestRateRecovery).
	if got := again.Binding().Check(quota.Fetch, now.Add(11*time.Second)); got != 0 {
		t.Fatalf("once the burst's window is purged the principal is still over: %v", got)
	}
	bob, _ := bind(t, e, "bob", "app")
	if got := bob.Binding().Check(quota.Fetch, now); got != 0 {
		t.Fatalf("another user is over alice's quota: %v", got)
	}
	if got := bob.Binding().Check(quota.Produce, now); got != 0 {
		t.Fatalf("a kind no rule limits: %v", got)
	}
	var none *quota.Binding
	if got := none.Check(quota.Fetch, now); got != 0 {
		t.Fatalf("no binding: %v", got)
	}
}

// TestRateThrottleRecordsNothing: Throttle is RecordChecked of nothing.
func TestRateThrottleRecordsNothing(t *testing.T) {
	r := quota.NewRate(quota.Windows{Samples: 11, Size: time.Second})
	want := r.RecordChecked(2000, 100, now)
	for i := 0; i < 3; i++ {
		if got := r.Throttle(100, now); got != want {
			t.Fatalf("Throttle %d: %v, want %v", i, got, want)
		}
	}
	if got := r.Throttle(100, now.Add(11*time.Second)); got != 0 {
		t.Fatalf("once the burst's window is purged: %v", got)
	}
}

// TestRecordUnlessOver: within the quota a response is counted and
// carries the throttle it brings; over it, nothing is counted (a broker
// "unrecords" a throttled fetch) and the throttle is the principal's.
func TestRecordUnlessOver(t *testing.T) {
	e := engine(t, "policy:\n  quotas: [{name: q, principals: [\"User:*\"], fetch_bytes_per_second: 100}]\n")
	c, _ := bind(t, e, "alice", "app")
	b := c.Binding()
	th, recorded := b.RecordUnlessOver(quota.Fetch, 2000, now)
	if !recorded || th == 0 {
		t.Fatalf("first response: recorded %v, throttle %v; want it counted, and throttled for taking the principal over", recorded, th)
	}
	if got, recorded := b.RecordUnlessOver(quota.Fetch, 5000, now); recorded || got != th {
		t.Fatalf("response while over: recorded %v, throttle %v; want nothing counted and the principal's throttle %v", recorded, got, th)
	}
	if got := b.Check(quota.Fetch, now); got != th {
		t.Fatalf("the refused response was counted: throttle %v, want %v", got, th)
	}
}
