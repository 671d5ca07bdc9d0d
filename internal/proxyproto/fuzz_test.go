package proxyproto

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// loopbackPeer is one end of a net.Pipe that reports a TCP peer address,
// as an accepted socket does.
type loopbackPeer struct{ net.Conn }

func (loopbackPeer) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
}

// FuzzAccept feeds arbitrary first bytes of a connection to Accept, in
// both modes. It must never panic or hang; whatever it serves must be the
// sent bytes minus a header at their start (nothing of a header reaches
// the Kafka parser, nothing of the client's is lost); Required serves only
// what starts with a PROXY signature.
func FuzzAccept(f *testing.F) {
	f.Add([]byte("PROXY TCP4 192.0.2.7 10.0.0.1 51234 9092\r\n\x00\x00\x00\x10"))
	f.Add([]byte("PROXY TCP6 2001:db8::7 2001:db8::1 51234 9092\r\n"))
	f.Add([]byte("PROXY UNKNOWN\r\n"))
	f.Add(append(v2TCP4("198.51.100.4", "10.0.0.1", 40000, 9092), kafkaStart...))
	f.Add(v2TCP6("2001:db8::42", "2001:db8::1", 40001, 9092))
	f.Add(v2(0x0, 0x00, nil))
	f.Add(kafkaStart)
	f.Fuzz(func(t *testing.T, sent []byte) {
		for _, mode := range []Mode{Optional, Required} {
			server, client := net.Pipe()
			go func() {
				client.Write(sent)
				client.Close()
			}()
			served, err := NewAcceptor(mode, loopback, time.Second).Accept(loopbackPeer{server})
			if errors.Is(err, ErrTimeout) {
				t.Fatalf("Accept timed out on a peer that sent %d bytes and closed", len(sent))
			}
			if err != nil {
				server.Close()
				continue
			}
			if served.RemoteAddr() == nil || served.RemoteAddr().String() == "" {
				t.Fatalf("served a connection with no client address")
			}
			rest, _ := io.ReadAll(served)
			server.Close()
			if !bytes.HasSuffix(sent, rest) {
				t.Fatalf("served %x, not a suffix of the sent %x", rest, sent)
			}
			headerLen := len(sent) - len(rest)
			if mode == Required && (headerLen == 0 || !(bytes.HasPrefix(sent, []byte("PROXY ")) || bytes.HasPrefix(sent, []byte("\r\n\r\n\x00\r\nQUIT\n")))) {
				t.Fatalf("required mode served %x without a PROXY header", sent)
			}
			if mode == Optional && headerLen > 0 && !(sent[0] == 'P' || sent[0] == '\r') {
				t.Fatalf("optional mode dropped %d leading bytes of %x that are no header", headerLen, sent)
			}
		}
	})
}
