package proxyproto

import (
	"bufio"
	"net"
)

// Conn is an accepted connection whose PROXY header was read. It reads
// first the bytes read past the header, then the socket, and reports the
// header's client as its RemoteAddr; everything else is the socket's.
type Conn struct {
	net.Conn
	rest   []byte // read past the header, not yet handed on
	client net.Addr
}

// wrap returns the connection that continues where br stopped reading.
func wrap(conn net.Conn, br *bufio.Reader, client net.Addr) *Conn {
	c := &Conn{Conn: conn, client: client}
	if n := br.Buffered(); n > 0 {
		c.rest, _ = br.Peek(n)
	}
	return c
}

// Read reads what followed the header, then the socket.
func (c *Conn) Read(b []byte) (int, error) {
	if len(c.rest) > 0 {
		n := copy(b, c.rest)
		c.rest = c.rest[n:]
		if len(c.rest) == 0 {
			c.rest = nil // drop the header buffer
		}
		return n, nil
	}
	return c.Conn.Read(b)
}

// RemoteAddr is the client's address from the header (the socket's peer
// for a LOCAL header or optional mode without one).
func (c *Conn) RemoteAddr() net.Addr { return c.client }

// PeerAddr is the socket's peer: the load balancer.
func (c *Conn) PeerAddr() net.Addr { return c.Conn.RemoteAddr() }

// TCPConn returns the socket when it is TCP and every byte read past the
// header has been handed on, so that a reader may bypass Conn (splice)
// from now on without reordering the stream. Same goroutine as Read.
func (c *Conn) TCPConn() (*net.TCPConn, bool) {
	tc, ok := c.Conn.(*net.TCPConn)
	return tc, ok && len(c.rest) == 0
}
