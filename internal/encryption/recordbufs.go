package encryption

import (
	"math/bits"
	"sync/atomic"
)

// Sizes of the pooled buffers: powers of two from 1<<minRecordBufShift
// to 1<<maxRecordBufShift, a class of idle buffers each, so that a buffer
// taken fits and a large one is not spent on a small partition.
const (
	minRecordBufShift = 16 // 64 KiB
	maxRecordBufShift = 23 // 8 MiB: a larger buffer goes to the collector
	recordBufClasses  = maxRecordBufShift - minRecordBufShift + 1
)

// idlePerClass is how many buffers of a size the pool keeps while no
// message uses them: a Produce request or Fetch response has a partition
// per buffer, and clients send several at once. maxIdleRecordBufBytes
// bounds them all.
const (
	idlePerClass          = 16
	maxIdleRecordBufBytes = 32 << 20
)

// recordBufs recycles the buffers produced partitions are sealed into
// and fetched ones opened into. A Produce request or Fetch response is
// about a megabyte of records: a new buffer each time costs clearing it
// and, later, collecting it, about as much as copying it. The engine
// hands them back (Verdict.Release, filter.OnResponseReleasing) once it
// has written the message. Bounded channels rather than a sync.Pool: a
// sync.Pool keeps every buffer put since the last collections, which with
// megabyte buffers doubled the proxy's peak RSS under the bench's load.
type recordBufs struct {
	idle      [recordBufClasses]chan *[]byte
	idleBytes atomic.Int64
}

func newRecordBufs() *recordBufs {
	p := &recordBufs{}
	for i := range p.idle {
		p.idle[i] = make(chan *[]byte, idlePerClass)
	}
	return p
}

// get returns an empty buffer of at least size bytes, and at most twice
// that: a message of many small partitions (thousands of a few hundred
// bytes each) must not take a buffer of the smallest class each, which
// would hold a hundred times the bytes limits.max_buffered_bytes counts.
// Those get a buffer of their size, not pooled.
func (p *recordBufs) get(size int) *[]byte {
	if !p.pooled(size) {
		b := make([]byte, 0, size)
		return &b
	}
	shift := bits.Len(uint(size - 1))
	select {
	case b := <-p.idle[shift-minRecordBufShift]:
		p.idleBytes.Add(-int64(cap(*b)))
		return b
	default:
	}
	b := make([]byte, 0, 1<<shift)
	return &b
}

// pooled reports whether get hands out pooled buffers for size bytes;
// other sizes are allocated for the call, which a rewrite that may change
// nothing can leave to the rewriter (it allocates only for a change).
func (p *recordBufs) pooled(size int) bool {
	shift := bits.Len(uint(size - 1))
	return shift >= minRecordBufShift && shift <= maxRecordBufShift
}

// put keeps b for reuse, in the class its capacity fills, unless that is
// full, the pool holds enough, or b is too small or too large.
func (p *recordBufs) put(b *[]byte) {
	shift := bits.Len(uint(cap(*b))) - 1 // the class b holds
	if shift < minRecordBufShift || shift > maxRecordBufShift {
		return
	}
	if p.idleBytes.Add(int64(cap(*b))) > maxIdleRecordBufBytes {
		p.idleBytes.Add(-int64(cap(*b)))
		return
	}
	*b = (*b)[:0]
	select {
	case p.idle[shift-minRecordBufShift] <- b:
	default:
		p.idleBytes.Add(-int64(cap(*b)))
	}
}

// heldRecordBufs is the buffers one request's partitions were sealed
// into (or one response's opened into), until the engine has written the
// message and releases them.
type heldRecordBufs struct {
	pool *recordBufs
	bufs []*[]byte
}

// keep settles buf, taken for a partition rewritten into out: held
// until the message is written when out is in it (inMessage), else given
// back now. out may have outgrown buf, and is then the one to hold.
func (s *heldRecordBufs) keep(buf *[]byte, out []byte, inMessage bool) {
	if !inMessage {
		s.pool.put(buf)
		return
	}
	*buf = out[:0]
	s.bufs = append(s.bufs, buf)
}

// release gives the buffers back: nothing reads them any more.
func (s *heldRecordBufs) release() {
	for _, b := range s.bufs {
		s.pool.put(b)
	}
	s.bufs = nil
}

// releaser is release, or nil when no buffer is held.
func (s *heldRecordBufs) releaser() func() {
	if len(s.bufs) == 0 {
		return nil
	}
	return s.release
}
