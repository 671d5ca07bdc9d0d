package encryption

import (
	"math/bits"
	"sync/atomic"
)

// Sizes of the pooled buffers: powers of two from minSealedClass to
// maxSealedClass, a class of idle buffers each, so that a buffer taken
// fits and a large one is not spent on a small partition.
const (
	minSealedShift = 16 // 64 KiB
	maxSealedShift = 23 // 8 MiB: a larger buffer goes to the collector
	sealedClasses  = maxSealedShift - minSealedShift + 1
)

// idlePerClass is how many buffers of a size the pool keeps while no
// request uses them: a Produce request has a partition per buffer, and
// a client sends several at once. maxIdleSealedBytes bounds them all.
const (
	idlePerClass       = 16
	maxIdleSealedBytes = 32 << 20
)

// sealedBufs recycles the buffers produced partitions are sealed into.
// A Produce request is about a megabyte of records: a new buffer each
// time costs clearing it and, later, collecting it, about as much as
// copying it. The engine hands them back (Verdict.Release) once it has
// written the request. Bounded channels rather than a sync.Pool: a
// sync.Pool keeps every buffer put since the last collections, which with
// megabyte buffers doubled the proxy's peak RSS under the bench's load.
type sealedBufs struct {
	idle      [sealedClasses]chan *[]byte
	idleBytes atomic.Int64
}

func newSealedBufs() *sealedBufs {
	p := &sealedBufs{}
	for i := range p.idle {
		p.idle[i] = make(chan *[]byte, idlePerClass)
	}
	return p
}

// get returns an empty buffer of at least size bytes.
func (p *sealedBufs) get(size int) *[]byte {
	shift := max(bits.Len(uint(size-1)), minSealedShift)
	if shift > maxSealedShift {
		b := make([]byte, 0, size)
		return &b
	}
	select {
	case b := <-p.idle[shift-minSealedShift]:
		p.idleBytes.Add(-int64(cap(*b)))
		return b
	default:
	}
	b := make([]byte, 0, 1<<shift)
	return &b
}

// put keeps b for reuse, in the class its capacity fills, unless that is
// full, the pool holds enough, or b is too small or too large.
func (p *sealedBufs) put(b *[]byte) {
	shift := bits.Len(uint(cap(*b))) - 1 // the class b holds
	if shift < minSealedShift || shift > maxSealedShift {
		return
	}
	if p.idleBytes.Add(int64(cap(*b))) > maxIdleSealedBytes {
		p.idleBytes.Add(-int64(cap(*b)))
		return
	}
	*b = (*b)[:0]
	select {
	case p.idle[shift-minSealedShift] <- b:
	default:
		p.idleBytes.Add(-int64(cap(*b)))
	}
}

// sealedInRequest is the buffers one request's partitions were sealed
// into, until the engine has written the request and releases them.
type sealedInRequest struct {
	pool *sealedBufs
	bufs []*[]byte
}

// release gives the buffers back: nothing reads them any more.
func (s *sealedInRequest) release() {
	for _, b := range s.bufs {
		s.pool.put(b)
	}
	s.bufs = nil
}
