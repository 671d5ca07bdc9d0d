package proxyproto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"
)

var (
	loopback  = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	elsewhere = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	// kafkaStart is what a Kafka client sends first: a frame size.
	kafkaStart = []byte{0, 0, 0, 20, 0, 18, 0, 3, 0, 0, 0, 1}
)

// v2 builds a v2 header as the specification lays it out (section 2.2),
// independently of the parser under test.
func v2(command, family byte, block []byte) []byte {
	h := []byte("\r\n\r\n\x00\r\nQUIT\n")
	h = append(h, 0x20|command, family)
	h = binary.BigEndian.AppendUint16(h, uint16(len(block)))
	return append(h, block...)
}

func v2TCP4(src, dst string, sport, dport uint16) []byte {
	b := append(netip.MustParseAddr(src).AsSlice(), netip.MustParseAddr(dst).AsSlice()...)
	b = binary.BigEndian.AppendUint16(b, sport)
	return v2(0x1, 0x11, binary.BigEndian.AppendUint16(b, dport))
}

func v2TCP6(src, dst string, sport, dport uint16) []byte {
	s, d := netip.MustParseAddr(src).As16(), netip.MustParseAddr(dst).As16()
	b := append(s[:], d[:]...)
	b = binary.BigEndian.AppendUint16(b, sport)
	return v2(0x1, 0x21, binary.BigEndian.AppendUint16(b, dport))
}

// loopbackPair is a real TCP connection over loopback: the client end,
// which has sent sent, and the accepted end. Both close when the test ends.
func loopbackPair(t *testing.T, sent []byte) (client, accepted net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	if _, err := client.Write(sent); err != nil {
		t.Fatal(err)
	}
	accepted, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { accepted.Close() })
	return client, accepted
}

// accept sends sent over a real loopback connection and accepts it with a.
// It returns what Accept returned and the bytes the served connection
// then yields (the sender closes after sent).
func accept(t *testing.T, a *Acceptor, sent []byte) (net.Addr, []byte, error) {
	t.Helper()
	client, conn := loopbackPair(t, sent)
	client.(*net.TCPConn).CloseWrite()
	served, err := a.Accept(conn)
	if err != nil {
		return nil, nil, err
	}
	rest, err := io.ReadAll(served)
	if err != nil {
		t.Fatalf("read after header: %v", err)
	}
	return served.RemoteAddr(), rest, nil
}

func TestAcceptHeaders(t *testing.T) {
	withTLV := v2TCP4("203.0.113.9", "10.0.0.1", 4000, 9092)
	withTLV[15] += 7                                                // length covers the TLV
	withTLV = append(withTLV, 0x05, 0x00, 0x04, 'v', 'p', 'c', 'e') // PP2_TYPE_UNIQUE_ID
	cases := []struct {
		name   string
		header []byte
		want   string // "" means the socket's own peer
	}{
		{"v1 TCP4", []byte("PROXY TCP4 192.0.2.7 10.0.0.1 51234 9092\r\n"), "192.0.2.7:51234"},
		{"v1 TCP6", []byte("PROXY TCP6 2001:db8::7 2001:db8::1 51234 9092\r\n"), "[2001:db8::7]:51234"},
		{"v1 UNKNOWN", []byte("PROXY UNKNOWN\r\n"), ""},
		{"v2 TCP4", v2TCP4("198.51.100.4", "10.0.0.1", 40000, 9092), "198.51.100.4:40000"},
		{"v2 TCP6", v2TCP6("2001:db8::42", "2001:db8::1", 40001, 9092), "[2001:db8::42]:40001"},
		{"v2 TCP6 carrying IPv4", v2TCP6("::ffff:198.51.100.5", "::ffff:10.0.0.1", 40002, 9092), "198.51.100.5:40002"},
		{"v2 LOCAL", v2(0x0, 0x00, nil), ""},
		{"v2 LOCAL with an address block", v2(0x0, 0x11, make([]byte, 12)), ""},
		{"v2 with TLV", withTLV, "203.0.113.9:4000"},
	}
	for _, mode := range []Mode{Optional, Required} {
		a := NewAcceptor(mode, loopback, time.Second)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				addr, rest, err := accept(t, a, append(append([]byte(nil), tc.header...), kafkaStart...))
				if err != nil {
					t.Fatalf("Accept: %v", err)
				}
				want := tc.want
				if want == "" {
					want = "127.0.0.1"
				}
				if got := addr.String(); got != want && !(tc.want == "" && netip.MustParseAddrPort(got).Addr().String() == want) {
					t.Fatalf("client address %s, want %s", got, want)
				}
				if !bytes.Equal(rest, kafkaStart) {
					t.Fatalf("after the header the connection yields %x, want the client's bytes %x", rest, kafkaStart)
				}
			})
		}
	}
}

func TestAcceptRefuses(t *testing.T) {
	long := append([]byte("PROXY TCP4 "), bytes.Repeat([]byte("1"), 120)...)
	tooBig := v2(0x1, 0x11, nil)
	binary.BigEndian.PutUint16(tooBig[14:], 0xffff)
	cases := []struct {
		name    string
		mode    Mode
		trusted []netip.Prefix
		sent    []byte
		want    error
	}{
		{"required without header", Required, loopback, kafkaStart, ErrMissing},
		{"required, TLS instead of a header", Required, loopback, []byte{0x16, 0x03, 0x01, 0x00, 0xa5}, ErrMissing},
		{"required from an untrusted peer", Required, elsewhere, v2TCP4("192.0.2.1", "10.0.0.1", 1, 2), ErrUntrusted},
		{"optional, header from an untrusted peer", Optional, elsewhere, v2TCP4("192.0.2.1", "10.0.0.1", 1, 2), ErrUntrusted},
		{"v1 without CRLF", Required, loopback, []byte("PROXY TCP4 192.0.2.7 10.0.0.1 51234 9092\n"), ErrMalformed},
		{"v1 longer than 107 bytes", Required, loopback, long, ErrMalformed},
		{"v1 bad address", Required, loopback, []byte("PROXY TCP4 999.0.2.7 10.0.0.1 51234 9092\r\n"), ErrMalformed},
		{"v1 TCP4 with IPv6", Required, loopback, []byte("PROXY TCP4 2001:db8::7 10.0.0.1 1 2\r\n"), ErrMalformed},
		{"v1 port out of range", Required, loopback, []byte("PROXY TCP4 192.0.2.7 10.0.0.1 70000 9092\r\n"), ErrMalformed},
		{"v1 truncated then closed", Required, loopback, []byte("PROXY TCP4 192.0.2."), ErrMalformed},
		{"v2 truncated then closed", Required, loopback, v2TCP4("192.0.2.1", "10.0.0.1", 1, 2)[:20], ErrMalformed},
		{"v2 length beyond the 4 KiB bound", Required, loopback, tooBig, ErrMalformed},
		{"v2 version 3", Required, loopback, append(v2TCP4("192.0.2.1", "10.0.0.1", 1, 2)[:12], 0x31, 0x11, 0, 0), ErrMalformed},
		{"v2 unknown command", Required, loopback, append(v2TCP4("192.0.2.1", "10.0.0.1", 1, 2)[:12], 0x2f, 0x11, 0, 0), ErrMalformed},
		{"v2 short address block", Required, loopback, v2(0x1, 0x11, make([]byte, 4)), ErrMalformed},
		{"v2 UDP", Required, loopback, v2(0x1, 0x12, make([]byte, 12)), ErrMalformed},
		{"v2 unix socket", Required, loopback, v2(0x1, 0x31, make([]byte, 216)), ErrMalformed},
		{"optional, malformed header", Optional, loopback, []byte("PROXY TCP9 x y 1 2\r\n"), ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := accept(t, NewAcceptor(tc.mode, tc.trusted, time.Second), tc.sent)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Accept: %v, want %v", err, tc.want)
			}
		})
	}
}

func TestOptionalServesConnectionsWithoutHeader(t *testing.T) {
	for name, trusted := range map[string][]netip.Prefix{"trusted peer": loopback, "untrusted peer": elsewhere} {
		t.Run(name, func(t *testing.T) {
			addr, rest, err := accept(t, NewAcceptor(Optional, trusted, time.Second), kafkaStart)
			if err != nil {
				t.Fatalf("Accept: %v", err)
			}
			if ap := netip.MustParseAddrPort(addr.String()); ap.Addr() != netip.MustParseAddr("127.0.0.1") {
				t.Fatalf("client address %s, want the socket's peer", addr)
			}
			if !bytes.Equal(rest, kafkaStart) {
				t.Fatalf("connection yields %x, want every byte the client sent %x", rest, kafkaStart)
			}
		})
	}
}

// A peer that sends half a header and then nothing must not hold the
// connection's goroutine beyond the deadline.
func TestHalfHeaderTimesOut(t *testing.T) {
	for name, half := range map[string][]byte{
		"v2 signature only":  v2TCP4("192.0.2.1", "10.0.0.1", 1, 2)[:12],
		"v2 without address": v2TCP4("192.0.2.1", "10.0.0.1", 1, 2)[:17],
		"one byte":           []byte("P"),
		"nothing":            nil,
	} {
		t.Run(name, func(t *testing.T) {
			_, conn := loopbackPair(t, half) // and then stall, connection open
			start := time.Now()
			_, err := NewAcceptor(Required, loopback, 200*time.Millisecond).Accept(conn)
			if !errors.Is(err, ErrTimeout) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("Accept: %v, want a timeout", err)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Fatalf("Accept returned after %s, deadline was 200ms", took)
			}
		})
	}
}

// Bytes coalesced with the header are handed on first; only then may a
// reader bypass Conn for the socket.
func TestConnHandsOnBytesBeforeSplice(t *testing.T) {
	client, conn := loopbackPair(t, append(v2TCP4("192.0.2.1", "10.0.0.1", 1, 2), kafkaStart...))
	served, err := NewAcceptor(Required, loopback, time.Second).Accept(conn)
	if err != nil {
		t.Fatal(err)
	}
	pc := served.(*Conn)
	if len(pc.rest) == 0 {
		t.Skip("the kernel delivered the header alone; nothing was read past it")
	}
	if _, ok := pc.TCPConn(); ok {
		t.Fatal("TCPConn offered the socket while bytes read past the header were not handed on")
	}
	got := make([]byte, len(kafkaStart))
	if _, err := io.ReadFull(pc, got); err != nil || !bytes.Equal(got, kafkaStart) {
		t.Fatalf("read %x (%v), want %x", got, err, kafkaStart)
	}
	if _, ok := pc.TCPConn(); !ok {
		t.Fatal("TCPConn refused the socket once every byte was handed on")
	}
	if pc.PeerAddr().String() != client.LocalAddr().String() {
		t.Fatalf("PeerAddr %s, want the balancer's socket %s", pc.PeerAddr(), client.LocalAddr())
	}
}
