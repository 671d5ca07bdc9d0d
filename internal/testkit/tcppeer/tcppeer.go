// Package tcppeer starts throw-away TCP servers on 127.0.0.1 for tests that
// need a peer behaving in one precise (often wrong) way, such as an
// upstream that answers with the wrong correlation id. It imports only the
// standard library, so the engine's own internal tests can use it.
package tcppeer

import (
	"net"
	"testing"
)

// Serve listens on 127.0.0.1 (an OS-chosen port) until the test ends and
// runs serve for every connection accepted, each in its own goroutine,
// closing the connection when serve returns. It returns the address.
func Serve(tb testing.TB, serve func(net.Conn)) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				serve(conn)
			}()
		}
	}()
	return ln.Addr().String()
}
