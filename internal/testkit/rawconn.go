package testkit

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// RawConn is one hand-driven Kafka connection (plaintext or TLS), for tests
// that must control exactly which bytes go on the wire, or see exactly what
// happens to one connection. Requests carry ClientID and correlation ids
// 1, 2, 3, ... in the order they are framed.
//
// Writes are bounded by a 5 second deadline and reads of a response by a
// 10 second one, so a stuck peer fails a test instead of hanging it.
type RawConn struct {
	net.Conn
	ClientID string
	corr     int32
}

// ErrBadResponse marks a response frame that arrived but is not the
// answer expected: another correlation id, or a header or body that does
// not decode. An error without it is the connection's own (closed, reset,
// timed out).
var ErrBadResponse = errors.New("bad response")

// maxResponseFrame bounds what ReadFrame allocates for one frame.
const maxResponseFrame = 64 << 20

// DialRaw connects to addr (failing the test if it cannot) with requests
// sent as clientID. The connection is closed when the test ends.
func DialRaw(t testing.TB, addr, clientID string) *RawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &RawConn{Conn: c, ClientID: clientID}
}

// DialRawTLS is DialRaw over TLS with cfg; the handshake's error is
// returned, not fatal, for tests of refused handshakes.
func DialRawTLS(t testing.TB, addr, clientID string, cfg *tls.Config) (*RawConn, error) {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	return &RawConn{Conn: c, ClientID: clientID}, nil
}

// Frame encodes req, size prefix included, with the next correlation id
// and returns the frame and that id. Nothing is written.
func (c *RawConn) Frame(req kmsg.Request) ([]byte, int32) {
	c.corr++
	h := protocol.RequestHeader{CorrelationID: c.corr, ClientID: c.ClientID}
	return protocol.AppendRequestFrame(nil, h, req), c.corr
}

// Send writes req as one frame and returns its correlation id.
func (c *RawConn) Send(req kmsg.Request) (int32, error) {
	frame, corr := c.Frame(req)
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	defer c.SetWriteDeadline(time.Time{})
	if _, err := c.Write(frame); err != nil {
		return corr, fmt.Errorf("write %s: %w", protocol.APIName(req.Key()), err)
	}
	return corr, nil
}

// SendPipelined writes n copies of req, each with its own correlation id,
// in one write before any response is read, as a pipelining client does,
// and returns their correlation ids in order.
func (c *RawConn) SendPipelined(req kmsg.Request, n int) ([]int32, error) {
	var frames []byte
	corrs := make([]int32, 0, n)
	for range n {
		f, corr := c.Frame(req)
		frames, corrs = append(frames, f...), append(corrs, corr)
	}
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	defer c.SetWriteDeadline(time.Time{})
	if _, err := c.Write(frames); err != nil {
		return corrs, fmt.Errorf("write %d %s requests: %w", n, protocol.APIName(req.Key()), err)
	}
	return corrs, nil
}

// Receive reads the next response frame and decodes it as the answer to
// req sent with correlation id corr (req's key and version say the
// layout). It returns the frame without its size prefix, and the response.
func (c *RawConn) Receive(req kmsg.Request, corr int32) ([]byte, kmsg.Response, error) {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	frame, err := ReadFrame(c)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s response: %w", protocol.APIName(req.Key()), err)
	}
	resp, err := DecodeResponse(req, corr, frame)
	return frame, resp, err
}

// RoundTrip sends req and receives its response.
func (c *RawConn) RoundTrip(req kmsg.Request) (kmsg.Response, error) {
	corr, err := c.Send(req)
	if err != nil {
		return nil, err
	}
	_, resp, err := c.Receive(req, corr)
	return resp, err
}

// MustRoundTrip is RoundTrip for a response that must arrive: any error
// fails the test.
func (c *RawConn) MustRoundTrip(t testing.TB, req kmsg.Request) kmsg.Response {
	t.Helper()
	resp, err := c.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// MustExchange is MustRoundTrip that also returns the response frame
// (without its size prefix), for tests that scan or compare the bytes.
func (c *RawConn) MustExchange(t testing.TB, req kmsg.Request) ([]byte, kmsg.Response) {
	t.Helper()
	corr, err := c.Send(req)
	if err != nil {
		t.Fatal(err)
	}
	frame, resp, err := c.Receive(req, corr)
	if err != nil {
		t.Fatal(err)
	}
	return frame, resp
}

// WithoutCorrelation is a copy of a response frame (without its size
// prefix) whose correlation id is zeroed, so that the answers to one
// request on two connections compare byte for byte.
func WithoutCorrelation(frame []byte) []byte {
	out := bytes.Clone(frame)
	copy(out, []byte{0, 0, 0, 0})
	return out
}

// APIVersions round-trips an ApiVersions v3 request and fails unless it is
// answered without an error code.
func (c *RawConn) APIVersions() (*kmsg.ApiVersionsResponse, error) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(3)
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kproxy-test", "1.0"
	resp, err := c.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r := resp.(*kmsg.ApiVersionsResponse)
	if r.ErrorCode != 0 {
		return r, fmt.Errorf("ApiVersions error code %d", r.ErrorCode)
	}
	return r, nil
}

// Versions does an ApiVersions exchange (failing the test on an error) and
// returns, per key, the highest version both the server and kmsg support.
func (c *RawConn) Versions(t testing.TB) map[int16]int16 {
	t.Helper()
	resp, err := c.APIVersions()
	if err != nil {
		t.Fatal(err)
	}
	m := map[int16]int16{}
	for _, k := range resp.ApiKeys {
		if r := kmsg.RequestForKey(k.ApiKey); r != nil {
			m[k.ApiKey] = min(k.MaxVersion, r.MaxVersion())
		}
	}
	return m
}

// ReadFrame reads one whole frame from r and returns it without its size
// prefix. A size over 64 MiB is an error, not an allocation.
func ReadFrame(r io.Reader) ([]byte, error) {
	var size [protocol.FrameSizeLen]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > maxResponseFrame {
		return nil, fmt.Errorf("%w: frame of %d bytes", ErrBadResponse, n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// DecodeResponse checks that response frame f (without its size prefix)
// carries correlation id corr and decodes it as the response to req. Its
// errors wrap ErrBadResponse.
func DecodeResponse(req kmsg.Request, corr int32, f []byte) (kmsg.Response, error) {
	name := protocol.APIName(req.Key())
	got, err := protocol.ResponseCorrelationID(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %s response: %v", ErrBadResponse, name, err)
	}
	if got != corr {
		return nil, fmt.Errorf("%w: %s response has correlation id %d, want %d", ErrBadResponse, name, got, corr)
	}
	body, err := wire.SkipResponseHeader(req.Key(), req.GetVersion(), f)
	if err != nil {
		return nil, fmt.Errorf("%w: %s response header: %v", ErrBadResponse, name, err)
	}
	resp, err := protocol.DecodeResponse(req.Key(), req.GetVersion(), body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadResponse, err)
	}
	return resp, nil
}

// MustDecodeResponse is DecodeResponse failing the test on an error.
func MustDecodeResponse(t testing.TB, req kmsg.Request, corr int32, f []byte) kmsg.Response {
	t.Helper()
	resp, err := DecodeResponse(req, corr, f)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// LoginPLAIN logs c in with SASL PLAIN as user (SaslHandshake v1,
// SaslAuthenticate v2), failing the test unless both succeed.
func (c *RawConn) LoginPLAIN(t testing.TB, user, password string) {
	t.Helper()
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = "PLAIN"
	resp, err := c.RoundTrip(hs)
	if err != nil || resp.(*kmsg.SASLHandshakeResponse).ErrorCode != 0 {
		t.Fatalf("SASL handshake: %v %+v", err, resp)
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.SetVersion(2)
	auth.SASLAuthBytes = []byte("\x00" + user + "\x00" + password)
	resp, err = c.RoundTrip(auth)
	if err != nil || resp.(*kmsg.SASLAuthenticateResponse).ErrorCode != 0 {
		t.Fatalf("SASL PLAIN as %s: %v %+v", user, err, resp)
	}
}
