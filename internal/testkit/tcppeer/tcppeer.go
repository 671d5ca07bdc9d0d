// Package tcppeer starts throw-away TCP servers on 127.0.0.1 for tests that
// need a peer behaving in one precise (often wrong) way, such as an
// upstream that answers with the wrong correlation id. It imports only the
// standard library, so the engine's own internal tests can use it.
package tcppeer

import (
	"net"
	"strconv"
	"sync"
	"syscall"
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

// Refusing returns a 127.0.0.1 address whose connections are refused at
// once, as a dead broker's port refuses them. Its port is bound without
// listening, so, unlike a closed listener's, no other test can take it
// while it is held. release frees the port (for a test that brings the
// address back with net.Listen); the test's end releases it too.
func Refusing(tb testing.TB) (addr string, release func()) {
	tb.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { syscall.Close(fd) }) }
	tb.Cleanup(release)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		tb.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		tb.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)), release
}
