package engine

import (
	"testing"
	"time"
)

// A filter's charges share the connection's budget with the engine's: a
// charge that does not fit waits for a release, and one waiting when the
// connection closes gives up, charging nothing.
func TestFilterMemoryWaitsForRelease(t *testing.T) {
	p := &pair{s: &Server{budget: testBudget(100)}, closed: make(chan struct{})}
	other := &budgetAccount{}
	if err := p.s.budget.acquire(other, 80, nil); err != nil {
		t.Fatal(err)
	}
	mem := pairMemory{p}
	done := make(chan error, 1)
	go func() { done <- mem.Acquire(50) }()
	select {
	case err := <-done:
		t.Fatalf("a filter's 50 bytes were granted with 80 of 100 held: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	p.s.budget.release(other, 80)
	waitFor(t, done, "the filter's charge after the release")
	if got := p.s.budget.held(); got != 50 {
		t.Fatalf("held %d, want the filter's 50", got)
	}
	mem.Release(50)
	if got := p.s.budget.held(); got != 0 {
		t.Fatalf("held %d after the release, want 0", got)
	}
	if err := p.s.budget.acquire(other, 100, nil); err != nil {
		t.Fatal(err)
	}
	go func() { done <- mem.Acquire(10) }()
	close(p.closed)
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a charge waiting when the connection closed was granted")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a charge waiting when the connection closed still waits")
	}
	if got := p.s.budget.held(); got != 100 {
		t.Fatalf("held %d, want only the other's 100", got)
	}
}
