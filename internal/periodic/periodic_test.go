package periodic_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/periodic"
)

// TestEveryCallsUntilCanceled: do runs repeatedly, not at once, and Every
// returns, with no further call, once ctx ends (here within the third
// call, however late the ticks come).
func TestEveryCallsUntilCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	returned := make(chan struct{})
	start := time.Now()
	firstAfter := make(chan time.Duration, 1)
	go func() {
		defer close(returned)
		periodic.Every(ctx, 20*time.Millisecond, func() {
			if calls.Add(1) == 1 {
				firstAfter <- time.Since(start)
			}
			if calls.Load() == 3 {
				cancel()
			}
		})
	}()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		cancel()
		t.Fatal("Every did not return after its context ended")
	}
	if got := calls.Load(); got != 3 {
		t.Errorf("do ran %d times; want 3 (it cancels on the third)", got)
	}
	if after := <-firstAfter; after < 20*time.Millisecond {
		t.Errorf("first call after %v; want one interval (20ms) or more", after)
	}
}

// TestEveryReturnsAtOnceOnEndedContext: with ctx already ended, do never runs.
func TestEveryReturnsAtOnceOnEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	periodic.Every(ctx, time.Millisecond, func() { t.Error("do ran on an ended context") })
}
