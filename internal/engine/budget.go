package engine

import (
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// memoryBudget bounds the bytes of requests and responses kproxy holds in
// memory at once (limits.max_buffered_bytes), as Kafka's broker bounds them
// with queued.max.request.bytes: frames read whole for filters, what their
// decoding allocates, responses buffered to be decoded and re-encoded.
// Frames no filter needs are streamed through fixed per-connection buffers
// and are not counted.
//
// A loop that wants more than is left waits, in arrival order, and stops
// reading its connection meanwhile: back-pressure instead of growth. Two
// rules keep waiting from turning into a deadlock:
//   - a charge larger than the whole budget is granted once nothing else is
//     held, so any single frame is served (alone);
//   - when everything held belongs to pairs that are themselves waiting
//     (a request that holds its frame and waits for its decoding, a
//     response that waits while its request's hook holds the request), no
//     release can come, so the oldest waiter whose pair already holds
//     budget is granted over the limit: it finishes and releases. The
//     overshoot is at most one message's charge.
type memoryBudget struct {
	mu    sync.Mutex
	limit int64 // <= 0: unbounded, still counted
	used  int64
	// blockedHeld is what pairs with a waiting loop hold.
	blockedHeld int64
	waiters     []*budgetWaiter
	gauge       prometheus.Gauge
}

// budgetAccount is one pair's share of the budget. Its fields are guarded
// by the budget's mutex.
type budgetAccount struct {
	held    int64
	waiting int // loops of the pair waiting for budget
}

type budgetWaiter struct {
	acct    *budgetAccount
	n       int64
	granted chan struct{}
}

var errBudgetAborted = errors.New("closed while waiting for limits.max_buffered_bytes")

func newMemoryBudget(limit int64, used, limitGauge prometheus.Gauge) *memoryBudget {
	limitGauge.Set(float64(limit))
	return &memoryBudget{limit: limit, gauge: used}
}

// acquire charges n bytes to acct, waiting until they fit. It gives up
// when abort is closed, charging nothing.
func (b *memoryBudget) acquire(acct *budgetAccount, n int64, abort <-chan struct{}) error {
	if n <= 0 {
		return nil
	}
	b.mu.Lock()
	if len(b.waiters) == 0 && b.fits(n) {
		b.charge(acct, n)
		b.mu.Unlock()
		return nil
	}
	w := &budgetWaiter{acct: acct, n: n, granted: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	if acct.waiting++; acct.waiting == 1 {
		b.blockedHeld += acct.held
	}
	b.dispatch()
	b.mu.Unlock()
	select {
	case <-w.granted:
		return nil
	case <-abort:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.granted: // granted meanwhile: give it back
		b.uncharge(acct, n)
	default:
		b.remove(w)
		b.unblock(acct)
	}
	b.dispatch()
	return errBudgetAborted
}

// release gives back n bytes charged to acct.
func (b *memoryBudget) release(acct *budgetAccount, n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.uncharge(acct, n)
	b.dispatch()
	b.mu.Unlock()
}

func (b *memoryBudget) fits(n int64) bool {
	return b.limit <= 0 || b.used == 0 || b.used+n <= b.limit
}

func (b *memoryBudget) charge(acct *budgetAccount, n int64) {
	b.used += n
	acct.held += n
	if acct.waiting > 0 {
		b.blockedHeld += n
	}
	b.gauge.Set(float64(b.used))
}

func (b *memoryBudget) uncharge(acct *budgetAccount, n int64) {
	b.used -= n
	acct.held -= n
	if acct.waiting > 0 {
		b.blockedHeld -= n
	}
	b.gauge.Set(float64(b.used))
}

func (b *memoryBudget) unblock(acct *budgetAccount) {
	if acct.waiting--; acct.waiting == 0 {
		b.blockedHeld -= acct.held
	}
}

// dispatch grants waiters in order while they fit, and breaks a standstill
// (see memoryBudget). b.mu held.
func (b *memoryBudget) dispatch() {
	for len(b.waiters) > 0 {
		w := b.waiters[0]
		if !b.fits(w.n) {
			if b.blockedHeld < b.used {
				return // a pair that is not waiting will release
			}
			w = b.waiters[0]
			for _, c := range b.waiters {
				if c.acct.held > 0 {
					w = c
					break
				}
			}
		}
		b.charge(w.acct, w.n)
		b.remove(w)
		b.unblock(w.acct)
		close(w.granted)
	}
}

func (b *memoryBudget) remove(w *budgetWaiter) {
	for i, c := range b.waiters {
		if c == w {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			return
		}
	}
}
