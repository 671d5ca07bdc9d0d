package testkit

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"
)

// ErrNotClosed marks a peer that sent bytes where it should have closed
// the connection.
var ErrNotClosed = errors.New("connection answered instead of closing")

// WaitClosed reads conn until the peer closes it (see IsClosedErr), for at
// most within, and returns how long that took. Bytes arriving first are an
// error wrapping ErrNotClosed (a connection kproxy refuses gets no answer);
// a connection still open after within is an error too.
func WaitClosed(conn net.Conn, within time.Duration) (time.Duration, error) {
	start := time.Now()
	conn.SetReadDeadline(start.Add(within))
	buf := make([]byte, 512)
	n, err := conn.Read(buf)
	elapsed := time.Since(start)
	switch {
	case n > 0:
		return elapsed, fmt.Errorf("%w: %d bytes %x", ErrNotClosed, n, buf[:min(n, 32)])
	case IsClosedErr(err):
		return elapsed, nil
	}
	return elapsed, fmt.Errorf("not closed after %s: %w", elapsed.Round(time.Millisecond), err)
}

// IsClosedErr says whether a read error means the peer closed the
// connection (EOF or a reset; for a TLS peer that closes during or right
// after the handshake, a broken pipe), as opposed to a local timeout.
func IsClosedErr(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.Contains(fmt.Sprint(err), "connection reset") || strings.Contains(fmt.Sprint(err), "broken pipe")
}
