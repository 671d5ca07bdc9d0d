package engine

import (
	"bufio"
	"time"

	"github.com/kproxy/kproxy/filter"
)

// responseHolder is a stage of the chain that holds requests to a budget
// across both loops (quotas: quota.go, fetchquota.go). It sees a request
// once the request filters passed it and once it was forwarded, and its
// response before it is relayed and once it was delivered. What it keeps
// of one request is a hold in the queue entry, opaque to the loops; the
// loops call it only for requests it holds.
type responseHolder interface {
	// link is the holder as Server.Chain lists it.
	link() filter.Link
	// afterFilters sees r once the request filters passed it: it may
	// answer it (r.owed.local), wait, and hold it (r.owed.hold).
	afterFilters(p *pair, r *clientRequest, cr *bufio.Reader, up *direction) error
	// forwarded: the held r was written upstream or answered.
	forwarded(p *pair, r *clientRequest)
	// owing: a response held with h is about to be queued.
	owing(p *pair, h hold)
	// deliverLocal delivers kproxy's own answer to the held owed; handled
	// false leaves it to the response loop.
	deliverLocal(p *pair, owed *pending, down *direction) (handled bool, err error)
	// beforeRelay sees the held owed's response of frameLen bytes, next
	// in down, before it is relayed, which the chain needs as need: it
	// may deliver it itself (done), or return a delay the response must
	// carry, with need raised if that takes decoding.
	beforeRelay(p *pair, owed *pending, down *direction, frameLen int, need filter.Need) (raised filter.Need, delay time.Duration, done bool, err error)
	// delivered: the held owed's response was delivered, or failed (err).
	delivered(p *pair, owed *pending, err error)
}

// hold is what a responseHolder keeps of one request. The zero hold: the
// request is not held.
type hold struct {
	// ref is the per-connection state the request is held to; nil: not
	// held.
	ref any
	// delay is what the response must carry (a throttle time).
	delay time.Duration
	// flags are the holder's own.
	flags uint8
}

func (h *hold) held() bool { return h.ref != nil }

// holdRequest gives r, which the request filters passed, to the server's
// holder, if any.
func (p *pair) holdRequest(r *clientRequest, cr *bufio.Reader, up *direction) error {
	if p.s.holder == nil {
		return nil
	}
	return p.s.holder.afterFilters(p, r, cr, up)
}
