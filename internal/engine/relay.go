package engine

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
)

// spliceMin is the smallest remainder of a frame worth handing to the
// kernel: below it, copying through the read buffer costs no more syscalls.
const spliceMin = 16 << 10

// Sides of a copy, so callers can tell which connection failed.
var (
	errReadSide  = errors.New("read")
	errWriteSide = errors.New("write")
)

// copyFrame moves n bytes from r to w through r's buffer, allocating
// nothing. Errors wrap errReadSide or errWriteSide.
func copyFrame(w *bufio.Writer, r *bufio.Reader, n int) error {
	for n > 0 {
		if r.Buffered() == 0 {
			if _, err := r.Peek(1); err != nil {
				return fmt.Errorf("%w: %w", errReadSide, err)
			}
		}
		k := min(r.Buffered(), n)
		b, _ := r.Peek(k)
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("%w: %w", errWriteSide, err)
		}
		r.Discard(k)
		n -= k
	}
	return nil
}

// stream relays one n-byte frame from src (read through r) to dst (written
// through w). Between two plain TCP connections, whatever of a large frame
// is not yet buffered moves socket to socket with splice(2), never entering
// user space; otherwise it is copied through r's buffer. Errors wrap
// errReadSide or errWriteSide.
func (d *direction) stream(n int) error {
	if n-d.r.Buffered() < spliceMin || d.srcTCP == nil || d.dstTCP == nil {
		return copyFrame(d.w, d.r, n)
	}
	if k := d.r.Buffered(); k > 0 {
		if err := copyFrame(d.w, d.r, k); err != nil {
			return err
		}
		n -= k
	}
	if err := d.w.Flush(); err != nil { // keep byte order: buffered bytes first
		return fmt.Errorf("%w: %w", errWriteSide, err)
	}
	for n > 0 {
		d.limited.R, d.limited.N = d.srcTCP, int64(n)
		moved, err := d.dstTCP.ReadFrom(&d.limited)
		n -= int(moved)
		switch {
		case err != nil && isTimeout(err) && d.onReadTimeout != nil:
			// A read deadline (idle check or drain) fell mid-frame: a frame
			// is always finished, so push the deadline and go on.
			d.onReadTimeout()
		case err != nil:
			return fmt.Errorf("%w: splice: %w", errReadSide, err)
		case moved == 0 && n > 0:
			return fmt.Errorf("%w: %w", errReadSide, io.ErrUnexpectedEOF)
		}
	}
	return nil
}

// direction is one half of a pair: where frames come from and go to.
type direction struct {
	r *bufio.Reader
	w *bufio.Writer
	// srcTCP and dstTCP are set only when both ends are plain TCP, which
	// enables splicing.
	srcTCP, dstTCP *net.TCPConn
	limited        io.LimitedReader // reused by every splice
	// onReadTimeout extends the source's read deadline during a splice.
	onReadTimeout func()
	stepper       streamStepper // reused by every walked frame
}

// newDirection relays from r, which buffers reads of src, to dst.
func newDirection(r *bufio.Reader, src, dst net.Conn) *direction {
	d := &direction{r: r, w: bufio.NewWriterSize(dst, writeBufSize)}
	srcTCP, ok1 := spliceable(src)
	dstTCP, ok2 := spliceable(dst)
	if ok1 && ok2 {
		d.srcTCP, d.dstTCP = srcTCP, dstTCP
	}
	return d
}
