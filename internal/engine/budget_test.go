package engine

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// held is what is charged now.
func (b *memoryBudget) held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

func testBudget(limit int64) *memoryBudget {
	return newMemoryBudget(limit, prometheus.NewGauge(prometheus.GaugeOpts{Name: "u"}), prometheus.NewGauge(prometheus.GaugeOpts{Name: "l"}))
}

// acquireAsync starts an acquire and returns a channel that yields its
// result.
func acquireAsync(b *memoryBudget, acct *budgetAccount, n int64, abort chan struct{}) chan error {
	done := make(chan error, 1)
	go func() { done <- b.acquire(acct, n, abort) }()
	return done
}

func waitFor(t *testing.T, done chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: still waiting", what)
	}
}

func notYet(t *testing.T, done chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s: returned %v while the budget is full", what, err)
	case <-time.After(50 * time.Millisecond):
	}
}

// A charge waits while the budget is full and proceeds once another
// releases: back-pressure, not growth.
func TestBudgetWaitsForRelease(t *testing.T) {
	b := testBudget(100)
	var a, c budgetAccount
	if err := b.acquire(&a, 80, nil); err != nil {
		t.Fatal(err)
	}
	done := acquireAsync(b, &c, 40, nil)
	notYet(t, done, "second charge")
	b.release(&a, 80)
	waitFor(t, done, "second charge after release")
	if got := b.held(); got != 40 {
		t.Fatalf("held %d, want 40", got)
	}
}

// A charge larger than the whole budget is served alone, not refused
// forever nor granted next to others.
func TestBudgetOversizeServedAlone(t *testing.T) {
	b := testBudget(100)
	var a, c budgetAccount
	if err := b.acquire(&a, 10, nil); err != nil {
		t.Fatal(err)
	}
	done := acquireAsync(b, &c, 500, nil)
	notYet(t, done, "oversize charge next to another")
	b.release(&a, 10)
	waitFor(t, done, "oversize charge alone")
}

// When everything held belongs to pairs that are themselves waiting (each
// holds its frame and wants its decoding charged), the oldest of them is
// granted over the limit instead of all waiting forever.
func TestBudgetStandstillBroken(t *testing.T) {
	b := testBudget(100)
	var a, c budgetAccount
	if err := b.acquire(&a, 60, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.acquire(&c, 40, nil); err != nil {
		t.Fatal(err)
	}
	doneC := acquireAsync(b, &c, 30, nil)
	notYet(t, doneC, "c while a is not waiting")
	doneA := acquireAsync(b, &a, 30, nil)
	select {
	case err := <-doneC:
		if err != nil {
			t.Fatal(err)
		}
	case err := <-doneA:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("deadlock: both pairs wait for each other")
	}
}

// A waiter whose pair closes gives up without keeping a charge.
func TestBudgetAbort(t *testing.T) {
	b := testBudget(100)
	var a, c budgetAccount
	if err := b.acquire(&a, 100, nil); err != nil {
		t.Fatal(err)
	}
	abort := make(chan struct{})
	done := acquireAsync(b, &c, 10, abort)
	notYet(t, done, "charge over a full budget")
	close(abort)
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("aborted acquire reported success")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("abort ignored")
	}
	b.release(&a, 100)
	if got := b.held(); got != 0 {
		t.Fatalf("held %d after everything was released", got)
	}
}
