package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// Buffer sizes per connection direction. Frames larger than a buffer are
// streamed through it, never held whole, unless a filter must decode them.
const (
	readBufSize  = 32 << 10
	writeBufSize = 32 << 10
	// keepDecodeBuf is the largest decode buffer a pair keeps between
	// responses; larger ones are dropped so idle pairs stay small.
	keepDecodeBuf = 1 << 20
	// drainPoll is how often a draining pair re-checks a half-read frame.
	drainPoll = 50 * time.Millisecond
)

// pending is one response the client is owed, in the order it asked.
type pending struct {
	correlationID int32
	key, version  int16
	// local, when set, is a whole response frame kproxy answers itself; the
	// upstream is not read for it.
	local []byte
	// onResponse, when set, sees the decoded upstream response first.
	onResponse func(kmsg.Response) error
}

// pair is one client connection and its upstream connection.
type pair struct {
	s        *Server
	id       uint64
	nodeID   int32
	listener string
	log      zerolog.Logger
	client   net.Conn
	upstream net.Conn // set by the request loop before the response loop starts
	// conn is what filters know of this connection; the request loop
	// updates ClientID per request.
	conn filter.Conn

	inflight chan pending
	// activity counts frames in both directions; the idle check compares it
	// across one idle period.
	activity atomic.Uint64
	// owed counts responses queued and not yet delivered, including the one
	// the response loop is waiting for, which has left the queue.
	owed atomic.Int64
	// idleSeen is activity when the idle deadline was last set (request
	// loop only).
	idleSeen   uint64
	draining   atomic.Bool
	atBoundary atomic.Bool // the request loop is between frames

	closeOnce sync.Once
	closed    chan struct{}

	decodeBuf []byte // response loop only
	encodeBuf []byte // response loop only
}

func newPair(s *Server, conn net.Conn, nodeID int32, listener string) *pair {
	id := s.nextID.Add(1)
	clientAddr, _ := netip.ParseAddrPort(conn.RemoteAddr().String())
	return &pair{
		conn:     filter.Conn{ID: id, Listener: listener, Client: clientAddr},
		s:        s,
		id:       id,
		nodeID:   nodeID,
		listener: listener,
		client:   conn,
		log: s.log.With().Uint64("conn", id).Str("listener", listener).
			Str("client", conn.RemoteAddr().String()).Logger(),
		inflight: make(chan pending, s.cfg.Limits.MaxInFlight),
		closed:   make(chan struct{}),
	}
}

// pairError says why a pair ended; reason is a metric label.
type pairError struct {
	reason string
	err    error
}

func (e *pairError) Error() string { return e.reason + ": " + e.err.Error() }
func (e *pairError) Unwrap() error { return e.err }

func fail(reason string, err error) error { return &pairError{reason: reason, err: err} }

// Reasons a pair ends.
const (
	reasonClientClosed   = "client_closed"
	reasonUpstreamClosed = "upstream_closed"
	reasonIdle           = "idle_timeout"
	reasonDrained        = "drained"
	reasonProtocol       = "protocol_error"
	reasonDial           = "upstream_unreachable"
	reasonRewrite        = "rewrite_failed"
	reasonFilter         = "filter_closed"
)

var (
	errIdle     = errors.New("no traffic for limits.idle_timeout")
	errDraining = errors.New("kproxy is shutting down")
)

// run serves the pair until either side ends it.
func (p *pair) run() {
	defer p.s.pairDone(p)
	p.client.SetReadDeadline(time.Now().Add(p.s.cfg.Limits.IdleTimeout))

	var responses sync.WaitGroup
	err := p.forwardRequests(&responses)
	close(p.inflight) // the request loop is the only sender
	var pe *pairError
	if errors.As(err, &pe) && pe.reason == reasonDrained && p.upstream != nil {
		responses.Wait() // answer what was already forwarded, then close
	}
	p.close(err)
	responses.Wait()
}

// close ends the pair once, logging why.
func (p *pair) close(err error) {
	p.closeOnce.Do(func() {
		close(p.closed)
		reason := "unknown"
		var pe *pairError
		if errors.As(err, &pe) {
			reason = pe.reason
		}
		ev := p.log.Warn()
		switch reason {
		case reasonClientClosed, reasonDrained, reasonIdle:
			ev = p.log.Debug()
		}
		ev.Str("reason", reason).AnErr("cause", err).Msg("connection closed")
		p.s.metrics.connsClosed.WithLabelValues(reason).Inc()
		p.client.Close()
		if p.upstream != nil {
			p.upstream.Close()
		}
	})
}

// drain asks the pair to stop reading requests at the next frame boundary
// and to close once every forwarded request is answered.
func (p *pair) drain() {
	p.draining.Store(true)
	p.client.SetReadDeadline(time.Now())
}

// connect dials the upstream, starts the response loop, and returns the
// client-to-upstream direction that reads through cr.
func (p *pair) connect(cr *bufio.Reader, responses *sync.WaitGroup) (*direction, error) {
	ctx, cancel := context.WithTimeout(context.Background(), p.s.cfg.Upstream.DialTimeout)
	defer cancel()
	conn, err := p.s.dialUpstream(ctx, p.nodeID)
	if err != nil {
		return nil, fail(reasonDial, err)
	}
	p.upstream = conn
	p.log.Debug().Str("upstream", conn.RemoteAddr().String()).Msg("upstream connected")

	up := newDirection(cr, p.client, conn)
	up.onReadTimeout = func() { p.client.SetReadDeadline(time.Now().Add(p.clientDeadline())) }
	down := newDirection(bufio.NewReaderSize(conn, readBufSize), conn, p.client)
	responses.Add(1)
	go func() {
		defer responses.Done()
		if err := p.forwardResponses(down); err != nil {
			p.close(err)
		}
	}()
	return up, nil
}

// clientReader reads from the client, turning read deadlines into the idle
// timeout and the shutdown drain.
type clientReader struct{ p *pair }

func (r clientReader) Read(b []byte) (int, error) {
	p := r.p
	for {
		n, err := p.client.Read(b)
		if n > 0 || err == nil || !isTimeout(err) {
			return n, err
		}
		switch {
		case p.draining.Load() && p.atBoundary.Load():
			return 0, errDraining
		case p.draining.Load():
			p.client.SetReadDeadline(time.Now().Add(drainPoll))
		case p.activity.Load() != p.idleSeen || p.owed.Load() > 0:
			p.idleSeen = p.activity.Load()
			p.client.SetReadDeadline(time.Now().Add(p.s.cfg.Limits.IdleTimeout))
		default:
			return 0, errIdle
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// clientReadError classifies an error from reading the client.
func clientReadError(err error) error {
	switch {
	case errors.Is(err, errDraining):
		return fail(reasonDrained, err)
	case errors.Is(err, errIdle):
		return fail(reasonIdle, err)
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		return fail(reasonClientClosed, err)
	}
	return fail(reasonClientClosed, fmt.Errorf("read client: %w", err))
}
