package engine

import (
	"errors"
	"fmt"
	"io"

	"github.com/kproxy/kproxy/filter"
)

// spliceChunk is what streaming a spliced value holds at a time, charged
// to limits.max_buffered_bytes: whatever the value's size, it passes
// through this much memory.
const spliceChunk = 256 << 10

// writeSplicedFrame writes pieces (planValueSplices) to the client,
// streaming each spliced value from its source. Once the first byte is
// written the frame's size is promised: a value that cannot be read to
// its end, or differs in length, closes the connection.
func (p *pair) writeSplicedFrame(down *direction, pieces []framePiece) error {
	defer p.releaseBuffers()
	if err := p.s.budget.acquire(&p.budget, spliceChunk, p.closed); err != nil {
		return fail(reasonClientClosed, err)
	}
	defer p.s.budget.release(&p.budget, spliceChunk)
	chunk := make([]byte, spliceChunk)
	for _, pc := range pieces {
		if pc.splice == nil {
			if _, err := down.w.Write(pc.raw); err != nil {
				return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
			}
			continue
		}
		if err := streamSplice(down, pc.splice, chunk, p.closed); err != nil {
			return err
		}
	}
	return nil
}

// errSpliceSource is a spliced value that could not be streamed whole.
var errSpliceSource = errors.New("spliced value")

// streamSplice copies sp's value to the client through chunk. The source
// is closed when closed is, so that a pair closing (the client gone,
// kproxy draining) does not wait on the store.
func streamSplice(down *direction, sp *filter.Splice, chunk []byte, closed <-chan struct{}) error {
	src, err := sp.Open()
	if err != nil {
		return fail(reasonFilter, fmt.Errorf("%w: open: %w", errSpliceSource, err))
	}
	done := make(chan struct{})
	defer func() {
		close(done)
		src.Close()
	}()
	go func() {
		select {
		case <-closed:
			src.Close()
		case <-done:
		}
	}()
	for left := sp.Size; left > 0; {
		n, err := src.Read(chunk[:min(int64(len(chunk)), left)])
		if n > 0 {
			if _, werr := down.w.Write(chunk[:n]); werr != nil {
				return fail(reasonClientClosed, fmt.Errorf("write client: %w", werr))
			}
			left -= int64(n)
		}
		switch {
		case left == 0:
		case errors.Is(err, io.EOF):
			return fail(reasonFilter, fmt.Errorf("%w: ended %d bytes short of its %d", errSpliceSource, left, sp.Size))
		case err != nil:
			return fail(reasonFilter, fmt.Errorf("%w: read after %d of %d bytes: %w", errSpliceSource, sp.Size-left, sp.Size, err))
		}
	}
	if err := expectEnd(src, chunk[:1]); err != nil {
		return fail(reasonFilter, fmt.Errorf("%w: at its end (%d bytes): %w", errSpliceSource, sp.Size, err))
	}
	return nil
}

// expectEnd reads src to its end, which must come now: a verifying
// reader reports a digest mismatch there.
func expectEnd(src io.Reader, one []byte) error {
	for range 100 { // a reader may return nothing a few times
		n, err := src.Read(one)
		switch {
		case n > 0:
			return errors.New("longer than its size")
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
	}
	return io.ErrNoProgress
}
