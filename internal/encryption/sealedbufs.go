package encryption

// maxPooledSealed bounds an output buffer kept for reuse: one grown for
// an unusually large partition goes back to the garbage collector.
const maxPooledSealed = 8 << 20

// idleSealed is how many buffers the pool keeps while no request uses
// them: about the partitions sealed at once, so that the pool holds a
// few megabytes, not one buffer per request ever in flight.
const idleSealed = 8

// sealedBufs recycles the buffers produced partitions are sealed into.
// A Produce request is about a megabyte of records: a new buffer each
// time costs clearing it and, later, collecting it, about as much as
// copying it. The engine hands them back (Verdict.Release) once it has
// encoded the request. A bounded channel rather than a sync.Pool: a
// sync.Pool keeps every buffer put since the last collections, which with
// megabyte buffers doubled the proxy's peak RSS under the bench's load.
type sealedBufs struct{ idle chan *[]byte }

func newSealedBufs() sealedBufs { return sealedBufs{idle: make(chan *[]byte, idleSealed)} }

// get returns an empty buffer of at least size bytes.
func (p *sealedBufs) get(size int) *[]byte {
	select {
	case b := <-p.idle:
		if cap(*b) >= size {
			return b
		}
	default:
	}
	b := make([]byte, 0, sealedRoom(size))
	return &b
}

// put keeps b for reuse, unless the pool is full or b too large.
func (p *sealedBufs) put(b *[]byte) {
	if cap(*b) > maxPooledSealed {
		return
	}
	*b = (*b)[:0]
	select {
	case p.idle <- b:
	default:
	}
}

// sealedRoom is the capacity of a new buffer for size bytes: rounded up
// to a quarter MiB, so that it also holds a slightly larger partition
// next time instead of being replaced.
func sealedRoom(size int) int {
	const quantum = 256 << 10
	return (size + quantum - 1) / quantum * quantum
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
