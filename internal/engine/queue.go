package engine

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// pending is one response the client is owed, in the order it asked: what
// the response loop needs to deliver it.
type pending struct {
	correlationID int32
	key, version  int16
	// local, when set, is a whole response frame kproxy answers itself; the
	// upstream is not read for it.
	local []byte
	// onResponse, when set, sees the decoded upstream response first
	// (after the chain's boundary).
	onResponse func(kmsg.Response) error
	// hookWants, when set, says from the raw body whether onResponse
	// has work in it (hookinspect.go); unset, onResponse sees every
	// response.
	hookWants func(version int16, body []byte) bool
	// boundary is what the chain's boundary needs of the response
	// (boundary.go).
	boundary boundaryState
	// deliver, when set, delivers this response instead of the response
	// loop: for what only a stage understands (a raw SASL token, the
	// answer to a request kproxy sent itself, an answer after which the
	// pair closes).
	deliver deliverFunc
	// charged is memory budget held for the request until its response
	// is handled (its hooks read the decoded request).
	charged int64
	// timing is what the request loop measured; the response loop
	// completes it and hands it to the observers.
	timing RequestTiming
	// hold is what the stage holding the request to a budget keeps of it
	// (hold.go): opaque here.
	hold hold
	// peek, when set, reads the first bytes of the response before it is
	// relayed, for the raw stage that asked (rawstage.go).
	peek responsePeek
}

// deliverFunc delivers owed, reading what the upstream sends for it (if
// anything) from down and writing what the client gets (if anything) to
// it. Response loop only. An error ends the pair.
type deliverFunc func(p *pair, owed pending, down *direction) error

// owedQueue is the FIFO of responses a client is owed, from the request
// loop (push) to the response loop (pop). Unlike a buffered channel it
// holds memory only for what is queued, so an idle connection costs
// nothing here, yet it still blocks push at max entries: back-pressure.
type owedQueue struct {
	mu     sync.Mutex
	items  []pending
	head   int
	closed bool
	max    int
	// Wake-ups, each holding at most one token; waiters re-check under mu.
	notEmpty chan struct{}
	notFull  chan struct{}
}

// keepQueueCap is the largest backing array an emptied queue keeps.
const keepQueueCap = 256

func newOwedQueue(max int) *owedQueue {
	return &owedQueue{max: max, notEmpty: make(chan struct{}, 1), notFull: make(chan struct{}, 1)}
}

func wake(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// push appends item, waiting while the queue is full. It gives up when
// abort is closed and reports false.
func (q *owedQueue) push(item pending, abort <-chan struct{}) bool {
	for {
		q.mu.Lock()
		if len(q.items)-q.head < q.max {
			q.items = append(q.items, item)
			q.mu.Unlock()
			wake(q.notEmpty)
			return true
		}
		q.mu.Unlock()
		select {
		case <-q.notFull:
		case <-abort:
			return false
		}
	}
}

// pop removes the oldest item, waiting while the queue is empty. It
// reports false once the queue is closed and drained.
func (q *owedQueue) pop() (pending, bool) {
	for {
		q.mu.Lock()
		if q.head < len(q.items) {
			item := q.items[q.head]
			q.items[q.head] = pending{} // drop references for the GC
			q.head++
			if q.head == len(q.items) {
				q.head, q.items = 0, q.items[:0]
				if cap(q.items) > keepQueueCap {
					q.items = nil
				}
			}
			q.mu.Unlock()
			wake(q.notFull)
			return item, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return pending{}, false
		}
		<-q.notEmpty
	}
}

// close marks the end of pushes; pop drains what is left, then stops.
func (q *owedQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	wake(q.notEmpty)
}

// idle reports whether the queue is open and empty: the consumer has
// nothing to do until the next push.
func (q *owedQueue) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.closed && q.head == len(q.items)
}

// len is how many items are queued.
func (q *owedQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}
