package e2esecurity

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/protocol"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// syncBuffer collects kproxy's log lines from any goroutine.
type syncBuffer = logbuf.Buffer

// waitFor polls cond until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); ; {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ---- raw protocol connections ----

// rawConn is a hand-driven Kafka connection (plaintext or TLS), for tests
// that must see exactly what happens to one connection.
type rawConn struct {
	net.Conn
	corr     int32
	clientID string
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{Conn: c, clientID: "e2esecurity-raw"}
}

// dialRawTLS dials addr and completes a TLS handshake with cfg.
func dialRawTLS(t *testing.T, addr string, cfg *tls.Config) (*rawConn, error) {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{Conn: c, clientID: "e2esecurity-raw"}, nil
}

// send writes req as one frame.
func (c *rawConn) send(req kmsg.Request) error {
	c.corr++
	frame := protocol.AppendRequestFrame(nil, protocol.RequestHeader{CorrelationID: c.corr, ClientID: c.clientID}, req)
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	defer c.SetWriteDeadline(time.Time{})
	_, err := c.Write(frame)
	return err
}

// roundTrip writes req and reads and decodes its response.
func (c *rawConn) roundTrip(req kmsg.Request) (kmsg.Response, error) {
	if err := c.send(req); err != nil {
		return nil, fmt.Errorf("write %s: %w", protocol.APIName(req.Key()), err)
	}
	return c.readResponse(req)
}

// readResponse reads and decodes the response to the last request sent,
// as a response to req (whose version says the layout).
func (c *rawConn) readResponse(req kmsg.Request) (kmsg.Response, error) {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, fmt.Errorf("read %s response: %w", protocol.APIName(req.Key()), err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		return nil, fmt.Errorf("read %s response: %w", protocol.APIName(req.Key()), err)
	}
	if corr, _ := protocol.ResponseCorrelationID(body); corr != c.corr {
		return nil, fmt.Errorf("correlation id %d, want %d", corr, c.corr)
	}
	b, err := protocol.SkipResponseHeader(req.Key(), req.GetVersion(), body)
	if err != nil {
		return nil, err
	}
	return protocol.DecodeResponse(req.Key(), req.GetVersion(), b)
}

// apiVersions round-trips an ApiVersions request and checks its answer.
func (c *rawConn) apiVersions() error {
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(3)
	req.ClientSoftwareName, req.ClientSoftwareVersion = "e2esecurity", "1"
	resp, err := c.roundTrip(req)
	if err != nil {
		return err
	}
	if code := resp.(*kmsg.ApiVersionsResponse).ErrorCode; code != 0 {
		return fmt.Errorf("ApiVersions error code %d", code)
	}
	return nil
}

// errNotClosed: the peer sent bytes instead of closing.
var errNotClosed = errors.New("connection answered instead of closing")

// waitClosed reads conn until the peer closes it (EOF or reset), up to
// within, and returns how long that took. Bytes arriving first are an
// error: a connection kproxy refuses gets no answer.
func waitClosed(conn net.Conn, within time.Duration) (time.Duration, error) {
	start := time.Now()
	conn.SetReadDeadline(start.Add(within))
	buf := make([]byte, 512)
	n, err := conn.Read(buf)
	elapsed := time.Since(start)
	switch {
	case n > 0:
		return elapsed, fmt.Errorf("%w: %d bytes %x", errNotClosed, n, buf[:min(n, 32)])
	case isClosedErr(err):
		return elapsed, nil
	}
	return elapsed, fmt.Errorf("not closed after %s: %w", elapsed.Round(time.Millisecond), err)
}

// isClosedErr says whether a read error means the peer closed the
// connection (as opposed to a local timeout).
func isClosedErr(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) ||
		// A TLS peer that closes during or right after the handshake.
		strings.Contains(fmt.Sprint(err), "connection reset") || strings.Contains(fmt.Sprint(err), "broken pipe")
}

// ---- metrics ----

// metricValue is the value of the counter or gauge name whose labels
// include every name=value pair in labels (summed over matches).
func metricValue(t testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, l := range m.GetLabel() {
					if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue metrics
				}
			}
			if c := m.GetCounter(); c != nil {
				sum += c.GetValue()
			}
			if g := m.GetGauge(); g != nil {
				sum += g.GetValue()
			}
		}
	}
	return sum
}

func closedTotal(t testing.TB, g prometheus.Gatherer, reason string) float64 {
	t.Helper()
	return metricValue(t, g, "kproxy_connections_closed_total", "reason", reason)
}

// ---- franz-go ----

func newClient(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// caPool is the test CA as a pool, for clients that build their own
// tls.Config.
func caPool(p pki) *x509.CertPool {
	pem, err := os.ReadFile(p.ca)
	if err != nil {
		panic(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return pool
}
