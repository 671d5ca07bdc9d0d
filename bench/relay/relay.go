// Package relay holds the two reference relays kproxy is measured against:
// byte pumps that know nothing of Kafka, so what they cost is the floor for
// any TCP proxy.
//
//   - Splice: io.Copy between two *net.TCPConn. On Linux the standard
//     library turns that into splice(2) through a pipe, so payload bytes
//     never enter user space.
//   - Copy: io.CopyBuffer through a 32 KiB user-space buffer per direction,
//     with the connections wrapped so the splice fast path cannot be taken:
//     every byte is read into user space and written back out, as kproxy's
//     own frame streaming does.
//   - TLS: terminates TLS from the client (crypto/tls) and relays the
//     plaintext with io.Copy to a plain TCP target: the floor for a proxy
//     that must decrypt, as kproxy with client TLS does.
//
// Each accepted client connection is paired with one connection to the
// relay's target, like a kproxy pair; a relay serves one target per
// listener, so port-per-broker is one listener per upstream broker.
package relay

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Mode selects how bytes are moved.
type Mode string

const (
	Splice Mode = "splice"
	Copy   Mode = "copy"
	TLS    Mode = "tls" // the listener must be a TLS listener
)

// CopyBufferSize is the user-space buffer per direction of a Copy relay.
const CopyBufferSize = 32 << 10

// ParseMode accepts "splice", "copy" or "tls".
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case Splice, Copy, TLS:
		return Mode(s), nil
	}
	return "", fmt.Errorf("relay mode %q: want splice, copy or tls", s)
}

// Serve accepts connections on ln and relays each to target until ln is
// closed. It returns nil once ln is closed and every pair has ended.
func Serve(ln net.Listener, target string, mode Mode) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	d := net.Dialer{Timeout: 10 * time.Second}
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			up, err := d.Dial("tcp", target)
			if err != nil {
				c.Close()
				return
			}
			Pipe(c, up, mode)
		}()
	}
}

// Pipe moves bytes both ways between a and b until both directions have
// ended, then closes both. A direction ends at EOF (passed on as a
// half-close) or at an error (which closes both connections, ending the
// other direction too). Splice needs both to be *net.TCPConn to splice.
func Pipe(a, b net.Conn, mode Mode) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); pump(b, a, mode) }()
	go func() { defer wg.Done(); pump(a, b, mode) }()
	wg.Wait()
	a.Close()
	b.Close()
}

func pump(dst, src net.Conn, mode Mode) {
	var err error
	switch mode {
	case Splice, TLS:
		// *net.TCPConn implements io.ReaderFrom with splice(2) for a
		// *net.TCPConn source: nothing is copied through user space. With
		// a *tls.Conn on either side io.Copy moves decrypted bytes through
		// a buffer, as any TLS-terminating proxy must.
		_, err = io.Copy(dst, src)
	default:
		buf := make([]byte, CopyBufferSize)
		// The wrappers hide ReadFrom and WriteTo, so CopyBuffer really
		// reads into buf and writes from it.
		_, err = io.CopyBuffer(writerOnly{dst}, readerOnly{src}, buf)
	}
	if err != nil {
		// Unblock the other direction; its error is then expected.
		dst.Close()
		src.Close()
		return
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}

type readerOnly struct{ io.Reader }

type writerOnly struct{ io.Writer }
