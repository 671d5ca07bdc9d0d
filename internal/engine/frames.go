package engine

import (
	"bufio"
	"io"
	"math/bits"
	"sync"
)

// eagerFrameAlloc is the most a frame read allocates before the bytes
// arrive; beyond it the buffer grows with what is actually received, so a
// client announcing a huge frame and sending a little of it costs little.
const eagerFrameAlloc = 64 << 10

// maxPooledFrame is the largest buffer kept for reuse: a bigger one goes
// back to the garbage collector rather than pinning memory in the pool.
// Requests rarely come near it (brokers default to 1 MiB messages), but a
// fetch response of 16 partitions of 1 MiB does, and a filter decrypting
// them decodes and re-encodes each: buffers of their size, allocated,
// zeroed and collected every time, were an eighth of kproxy's CPU.
const maxPooledFrame = 16 << 20

// maxIdleFrameBytes and maxIdleFrames bound the buffers the pool keeps
// while no frame uses them: their capacity, and their number (which bounds
// the scan for one that fits).
const (
	maxIdleFrameBytes = 32 << 20
	maxIdleFrames     = 64
)

// framePool recycles the buffers that whole request frames are read into
// when a filter must decode them. A produce read whole for a policy check
// then costs a copy through user space, not an allocation the size of the
// request plus the garbage collection of it.
//
// It is a free list, not a sync.Pool: a sync.Pool hands a buffer put on
// one P to a goroutine on another only after a miss, so pairs kept
// allocating buffers (and growing small ones for large frames) while
// others sat idle, and the collector emptied it every other cycle. Here a
// frame gets the smallest idle buffer that holds it, the number of
// buffers is the most frames read at once, and idle buffers stay up to
// maxIdleFrameBytes.
type framePool struct {
	mu    sync.Mutex
	idle  []*[]byte
	bytes int // capacity of the idle buffers
}

// get returns an empty buffer for a frame of frameLen bytes: the smallest
// idle one that holds it, else a new one (the idle ones stay for smaller
// frames).
func (fp *framePool) get(frameLen int) *[]byte {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	best := -1
	for i, b := range fp.idle {
		if c := cap(*b); c >= frameLen && (best < 0 || c < cap(*fp.idle[best])) {
			best = i
		}
	}
	if best < 0 {
		return new([]byte)
	}
	b := fp.idle[best]
	last := len(fp.idle) - 1
	fp.idle[best], fp.idle[last] = fp.idle[last], nil
	fp.idle = fp.idle[:last]
	fp.bytes -= cap(*b)
	return b
}

// put makes buf available again. Nothing may use its bytes afterwards.
func (fp *framePool) put(buf *[]byte) {
	if buf == nil || cap(*buf) == 0 || cap(*buf) > maxPooledFrame {
		return
	}
	*buf = (*buf)[:0]
	fp.mu.Lock()
	defer fp.mu.Unlock()
	if len(fp.idle) == maxIdleFrames {
		// Full: buf takes the smallest idle buffer's place if it is larger.
		smallest := 0
		for i, b := range fp.idle {
			if cap(*b) < cap(*fp.idle[smallest]) {
				smallest = i
			}
		}
		if cap(*fp.idle[smallest]) >= cap(*buf) {
			return // to the collector
		}
		fp.bytes -= cap(*fp.idle[smallest])
		last := len(fp.idle) - 1
		fp.idle[smallest], fp.idle[last] = fp.idle[last], nil
		fp.idle = fp.idle[:last]
	}
	if fp.bytes+cap(*buf) > maxIdleFrameBytes {
		return // to the collector
	}
	fp.idle = append(fp.idle, buf)
	fp.bytes += cap(*buf)
}

// frameRoom is the capacity a buffer grows to for a frame of frameLen
// bytes: rounded up to a power of two up to 1 MiB and to whole MiB beyond,
// so that the pooled buffer also holds the next, slightly larger, request
// of a producer whose request sizes vary, instead of being replaced (a
// fresh allocation, its pages faulted in, and a copy of what had arrived).
// Frames too large to be pooled get exactly their size.
func frameRoom(frameLen int) int {
	const quantum = 1 << 20
	var room int
	if frameLen <= quantum {
		room = 1 << bits.Len(uint(frameLen-1))
	} else {
		room = (frameLen + quantum - 1) / quantum * quantum
	}
	if room > maxPooledFrame {
		return frameLen
	}
	return room
}

// readFrame reads one whole frame of frameLen bytes (size prefix included)
// from cr into dst, reusing dst's room, and returns it. Beyond
// eagerFrameAlloc the buffer grows at most twofold over what has arrived.
func readFrame(dst []byte, cr *bufio.Reader, frameLen int) ([]byte, error) {
	return readFrameReserving(dst, cr, frameLen, nil)
}

// reserveChunk is the most of a frame that readFrameReserving reserves
// ahead of the bytes that have arrived.
const reserveChunk = 256 << 10

// readFrameReserving is readFrame that, when reserve is not nil, first
// reserves the bytes it is about to read (reserve(n) for n more), at most
// reserveChunk ahead of what has arrived. A frame is thus charged as its
// bytes come: a client that announces a large frame and trickles it holds
// what it sent, not what it announced, and cannot tie up
// limits.max_buffered_bytes for everyone else.
func readFrameReserving(dst []byte, cr *bufio.Reader, frameLen int, reserve func(n int) error) ([]byte, error) {
	if cap(dst) < min(frameLen, eagerFrameAlloc) {
		dst = make([]byte, 0, min(frameLen, eagerFrameAlloc))
	}
	buf := dst[:0]
	reserved := 0
	for len(buf) < frameLen {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(frameRoom(frameLen), 2*cap(buf)))
			copy(grown, buf)
			buf = grown
		}
		end := min(cap(buf), frameLen)
		if reserve != nil {
			end = min(end, len(buf)+reserveChunk)
			if end > reserved {
				if err := reserve(end - reserved); err != nil {
					return nil, err
				}
				reserved = end
			}
		}
		n, err := cr.Read(buf[len(buf):end])
		buf = buf[:len(buf)+n]
		if err != nil && len(buf) < frameLen {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, clientReadError(err)
		}
	}
	return buf, nil
}
