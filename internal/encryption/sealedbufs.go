package encryption

import "sync"

// maxPooledSealed bounds an output buffer kept for reuse: one grown for
// an unusually large partition goes back to the garbage collector.
const maxPooledSealed = 8 << 20

// sealedBufs recycles the buffers produced partitions are sealed into.
// A Produce request is about a megabyte of records: a new buffer each
// time costs clearing it and, later, collecting it, about as much as
// copying it. The engine hands them back (Verdict.Release) once it has
// encoded the request.
type sealedBufs struct{ pool sync.Pool }

// get returns an empty buffer of at least size bytes.
func (p *sealedBufs) get(size int) *[]byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		if cap(*b) >= size {
			return b
		}
		p.pool.Put(b)
	}
	b := make([]byte, 0, size)
	return &b
}

func (p *sealedBufs) put(b *[]byte) {
	if cap(*b) > maxPooledSealed {
		return
	}
	*b = (*b)[:0]
	p.pool.Put(b)
}

// sealedInRequest is the buffers one request's partitions were sealed
// into, until the engine releases them.
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
