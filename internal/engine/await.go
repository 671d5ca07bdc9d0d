package engine

import (
	"fmt"
	"sync"
	"time"
)

// upstreamWait lets the response loop, when nothing is owed, wait for the
// upstream's next bytes instead of for the request loop's next push. Every
// upstream response follows a push, so a push need not wake the response
// loop: that saves a goroutine hand-off, and with it usually an OS thread
// wake-up, on every request of a client that waits for each answer. What
// brings no upstream bytes (a local answer, the end of the request loop)
// interrupts the wait with a past read deadline on the upstream
// connection, set only while the loop is waiting there, never mid-frame.
type upstreamWait struct {
	mu          sync.Mutex
	waiting     bool // the response loop is (about to be) blocked reading upstream
	interrupted bool // a past read deadline is set on the upstream connection
}

// awaitUpstream returns once the upstream has bytes to read, something is
// queued, or the queue is closed. Response loop only.
func (p *pair) awaitUpstream(down *direction) error {
	w := &p.upstreamWait
	for {
		w.mu.Lock()
		if !p.inflight.idle() {
			w.mu.Unlock()
			return nil
		}
		w.waiting = true
		w.mu.Unlock()

		_, err := down.r.Peek(1)

		w.mu.Lock()
		w.waiting = false
		if w.interrupted {
			w.interrupted = false
			p.upstream.SetReadDeadline(time.Time{})
		}
		w.mu.Unlock()
		switch {
		case err == nil:
			return nil
		case !isTimeout(err):
			if !p.inflight.idle() {
				return nil // let the queued item's own read report it
			}
			return fail(reasonUpstreamIdle, fmt.Errorf("upstream closed with nothing owed: %w", err))
		}
	}
}

// wakeResponses interrupts the response loop's wait for upstream bytes,
// after the request loop queued something it must act on without them.
// Request loop only (it set p.upstream).
func (p *pair) wakeResponses() {
	if p.upstream == nil {
		return // no response loop yet
	}
	w := &p.upstreamWait
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiting && !w.interrupted {
		w.interrupted = true
		p.upstream.SetReadDeadline(time.Now())
	}
}
