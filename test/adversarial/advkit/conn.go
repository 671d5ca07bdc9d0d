package advkit

import (
	"errors"
	"io"
	"net"
	"time"
)

// ClosedWithin reports whether the peer closes c within d: a read that
// ends in EOF or a reset rather than the deadline. Whatever the peer still
// sends is read and dropped.
func ClosedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	return !IsTimeout(err)
}

// IsTimeout reports whether err is a deadline passing, not the peer
// closing the connection.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
