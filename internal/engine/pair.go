package engine

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

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/quota"
	"github.com/kproxy/kproxy/internal/wire"
)

// Buffer sizes per connection direction. Frames larger than a buffer are
// streamed through it, never held whole, unless a filter must decode them.
const (
	readBufSize  = 16 << 10
	writeBufSize = 8 << 10
	// keepDecodeBuf is the largest decode buffer a pair keeps between
	// responses; larger ones are dropped so idle pairs stay small.
	keepDecodeBuf = 1 << 20
	// drainPoll is how often a draining pair re-checks a half-read frame.
	drainPoll = 50 * time.Millisecond
)

// pair is one client connection and its upstream connection.
type pair struct {
	s        *Server
	nodeID   int32
	listener string
	// via is the listener the pair came in on: its route secures the
	// connection, and may set nodeID from the handshake.
	via listenerKind
	// log is the pair's logger; it gains a user field when the client
	// authenticates, on the request loop, while other goroutines (the
	// response loop, the handshake timer, Shutdown) log through it: hence
	// an atomic pointer, read with logger and replaced with setLogger.
	log atomic.Pointer[zerolog.Logger]
	// raw is the accepted socket, for closing and deadlines from any
	// goroutine; client is what the request loop reads (TLS over raw, or
	// raw itself) and is set before the loops start.
	raw      net.Conn
	client   net.Conn
	upstream net.Conn // set once by the request loop, under upstreamMu
	// upstreamMu orders setting upstream with close, which may run on
	// another goroutine (shutdown, handshake timer).
	upstreamMu sync.Mutex
	// conn is what filters know of this connection; the request loop
	// updates ClientID per request.
	conn filter.Conn

	inflight     *owedQueue
	upstreamWait upstreamWait
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

	// auth is the client's authentication stage (authstage.go); session
	// is kproxy's own login on the upstream connection (reauth.go).
	auth    authStage
	session upstreamSession

	closeOnce sync.Once
	closed    chan struct{}

	// budget is this pair's share of limits.max_buffered_bytes.
	budget budgetAccount

	decodeBuf []byte         // response loop only
	encodeBuf []byte         // response loop only
	splicer   filter.Splicer // response loop only: the values a response's handlers spliced
	// responseReleases (response loop only) are the handlers' releases
	// of the response at hand.
	responseReleases []func()
	// pieceScratch and responsePieces (response loop only): a response
	// whose records are written in place (writeRecordsInPlace) encoded
	// with placeholders, and its records.
	pieceScratch   []byte
	responsePieces []recordsPiece
	mapBuf         []byte // response loop only: a response the name mapper rewrote raw
	// large is the response loop's buffers of responses over
	// keepDecodeBuf, borrowed from the frame pool (responsebufs.go).
	large largeResponseBufs

	// observed is the timing of the response being delivered (response
	// loop only); requestObserved that of a request the request loop
	// completes itself; requestStart is when the request in hand began
	// (request loop only; zero for a raw SASL token). Observers get
	// pointers to these fields, so observing allocates nothing.
	observed        RequestTiming
	requestObserved RequestTiming
	requestStart    time.Time
	// walkErrors counts the error codes of a response walked, not
	// decoded, and walkBody walks a buffered one (response loop only).
	walkErrors responseErrorCounter
	walkBody   wire.ErrorWalker
	// opened is when the client connected; received and sent count the
	// bytes of its frames each way, for the close log line; bytesIn and
	// bytesOut are the listener's byte counters.
	opened            time.Time
	received, sent    atomic.Int64
	bytesIn, bytesOut prometheus.Counter
	// clientID is the last request's client id, for the close line, which
	// may be written on any goroutine.
	clientID atomic.Pointer[string]
	// quota is the connection's quota binding (request loop only);
	// mutedUntil (unix nanoseconds) is when the request loop may read the
	// client again after a throttle (quota.go).
	quota      quota.Conn
	mutedUntil atomic.Int64
	// fetchSessions are the fetch session ids the broker gave this
	// connection, the only ones it may use (fetchsession.go).
	fetchSessions fetchSessionGuard
	// shareSessions are the share sessions the broker opened for this
	// connection, the only ones it may use (sharesession.go).
	shareSessions shareSessionGuard
	// admission is the connection's place under the connection limits,
	// released when the pair ends; nil for a pair built without accept.
	admission *admission
	// fetchesOwed counts the fetches held to a fetch quota owed and not
	// yet answered, and fetchAnswered (made with the first, one token)
	// wakes the request loop waiting for them (fetchquota.go).
	fetchesOwed   atomic.Int32
	fetchAnswered chan struct{}
	// request is the request in the request loop's hands, and delivering
	// the response in the response loop's: the chain's stages reach them
	// by pointer, which would move a local to the heap on every request.
	request    clientRequest
	delivering pending
	// whole is the request filterRequest read whole (request loop only).
	whole wholeRequest
}

func newPair(s *Server, conn net.Conn, nodeID int32, listener string) *pair {
	id := s.connIDs.Add(1)
	clientAddr, _ := netip.ParseAddrPort(conn.RemoteAddr().String())
	p := &pair{
		conn:     filter.Conn{ID: id, Listener: listener, Client: clientAddr, VirtualCluster: s.virtualCluster},
		s:        s,
		nodeID:   nodeID,
		listener: listener,
		raw:      conn,
		client:   conn,
		inflight: newOwedQueue(s.cfg.Limits.MaxInFlight),
		auth:     noAuth{},
		closed:   make(chan struct{}),
		opened:   time.Now(),
		bytesIn:  s.metrics.receivedBytes.WithLabelValues(listener),
		bytesOut: s.metrics.sentBytes.WithLabelValues(listener),
	}
	p.conn.Memory = pairMemory{p}
	p.setLogger(s.log.With().Uint64("conn", id).Str("listener", listener).
		Str("client", conn.RemoteAddr().String()).Logger())
	return p
}

// logger is the pair's current logger, safe from any goroutine.
func (p *pair) logger() *zerolog.Logger { return p.log.Load() }

// setLogger replaces the pair's logger (to add the authenticated user).
func (p *pair) setLogger(l zerolog.Logger) { p.log.Store(&l) }

// pairError says why a pair ended; reason is a metric label.

type pairError struct {
	reason string
	err    error
	// deliverFirst: answer what is owed before closing.
	deliverFirst bool
}

func (e *pairError) Error() string { return e.reason + ": " + e.err.Error() }
func (e *pairError) Unwrap() error { return e.err }

func fail(reason string, err error) error { return &pairError{reason: reason, err: err} }

// failAfterDelivery ends the request loop but lets owed responses through.
func failAfterDelivery(reason string, err error) error {
	return &pairError{reason: reason, err: err, deliverFirst: true}
}

// Reasons a pair ends.
const (
	reasonClientClosed   = "client_closed"
	reasonUpstreamClosed = "upstream_closed"
	// reasonUpstreamIdle: the upstream closed while nothing was owed, as a
	// broker does after connections.max.idle.ms. Nothing is lost; the
	// client reconnects through kproxy.
	reasonUpstreamIdle = "upstream_closed_idle"
	reasonIdle         = "idle_timeout"
	reasonDrained      = "drained"
	reasonProtocol     = "protocol_error"
	reasonDial         = "upstream_unreachable"
	reasonRewrite      = "rewrite_failed"
	reasonFilter       = "filter_closed"
	reasonTLS          = "tls_failed"
	reasonAuth         = "sasl_failed"
	reasonLimit        = "connection_limit"
	reasonSNI          = "sni_unroutable" // listeners.sni: the server name reaches no node
)

var (
	errIdle     = errors.New("no traffic for limits.idle_timeout")
	errDraining = errors.New("kproxy is shutting down")
)

// run serves the pair until either side ends it.
func (p *pair) run() {
	defer p.s.pairDone(p)
	p.logOpened()
	if err := p.start(); err != nil {
		p.inflight.close()
		p.close(err)
		return
	}
	p.armReadDeadline(time.Now().Add(p.s.cfg.Limits.IdleTimeout))

	var responses sync.WaitGroup
	err := p.forwardRequests(&responses)
	var pe *pairError
	deliver := errors.As(err, &pe) && (pe.reason == reasonDrained || pe.deliverFirst) && p.upstream != nil
	if !deliver {
		p.close(err) // first, so the log and metric name the request loop's reason
	}
	p.inflight.close() // the request loop is the only sender
	p.wakeResponses()
	responses.Wait() // when delivering: until every owed response is out
	p.close(err)
	p.releaseQuota()
	for owed, ok := p.inflight.pop(); ok; owed, ok = p.inflight.pop() {
		p.s.budget.release(&p.budget, owed.charged) // never answered
	}
	p.s.metrics.inFlight.Sub(float64(p.owed.Load())) // owed, never delivered
}

// start secures a new client connection: TLS handshake, the auth stage,
// and the deadline by which a SASL client must have authenticated.
func (p *pair) start() error {
	if err := p.via.route(p); err != nil {
		return err
	}
	auth, err := newAuthStage(p)
	if err != nil {
		return err
	}
	p.auth = auth
	if auth.authenticated() {
		p.s.handshakeDone(p.admission)
	}
	p.enforceHandshakeTimeout()
	return nil
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
		p.logClosed(reason, err)
		p.s.metrics.connsClosed.WithLabelValues(reason).Inc()
		if reason == reasonUpstreamClosed || reason == reasonUpstreamIdle {
			p.s.metrics.upstream.node(p.nodeID).disconnects.Inc()
		}
		p.raw.Close()
		p.upstreamMu.Lock()
		if p.upstream != nil {
			p.upstream.Close()
		}
		p.upstreamMu.Unlock()
	})
}

// drain asks the pair to stop reading requests at the next frame boundary
// and to close once every forwarded request is answered.
func (p *pair) drain() {
	p.draining.Store(true)
	p.raw.SetReadDeadline(time.Now())
}

// armReadDeadline sets the client's read deadline to t (the idle timeout,
// or the session's re-authentication) unless the pair is draining: drain
// runs on Shutdown's goroutine at any moment, and a deadline armed just
// after its own would keep the pair reading until the idle timeout. drain
// stores draining before setting its deadline, so whichever of the two
// runs second leaves the deadline in the past.
func (p *pair) armReadDeadline(t time.Time) {
	p.client.SetReadDeadline(t)
	if p.draining.Load() {
		p.raw.SetReadDeadline(time.Now())
	}
}

// connect opens the upstream connection, starts the response loop, and
// returns the client-to-upstream direction that reads through cr. Request
// loop only, and only for a request that must reach the upstream (see
// forward): in SASL terminate mode, once the client has authenticated.
func (p *pair) connect(cr *bufio.Reader, responses *sync.WaitGroup) (*direction, error) {
	ctx, cancel := context.WithTimeout(context.Background(), p.s.cfg.Upstream.DialTimeout)
	defer cancel()
	conn, login, err := p.s.openUpstream(ctx, p.nodeID)
	if err != nil {
		return nil, fail(reasonDial, err)
	}
	p.session.begin(login)
	if err := p.auth.upstreamConnected(ctx, conn); err != nil {
		conn.Close()
		return nil, fail(reasonDial, err)
	}
	p.upstreamMu.Lock()
	p.upstream = conn
	p.upstreamMu.Unlock()
	select {
	case <-p.closed: // closed while dialling: close() could not see conn
		conn.Close()
		return nil, fail(reasonClientClosed, errors.New("closed while connecting upstream"))
	default:
	}
	p.logger().Debug().Str("upstream", conn.RemoteAddr().String()).Msg("upstream connected")
	if p.session.reauthenticates() {
		p.armReadDeadline(p.readDeadline())
	}

	up := newDirection(cr, p.client, conn)
	up.onReadTimeout = p.armMidFrameDeadline
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

// answerDirect writes kproxy's answer local to the client from the request
// loop, while there is no upstream connection and so no response loop:
// nothing else is owed, so nothing can overtake it.
func (p *pair) answerDirect(local []byte) error {
	p.client.SetWriteDeadline(time.Now().Add(p.s.cfg.Limits.IdleTimeout))
	_, err := p.client.Write(local)
	p.client.SetWriteDeadline(time.Time{})
	if err != nil {
		return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
	}
	p.activity.Add(1)
	return nil
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
		case p.session.reauthDue() && p.atBoundary.Load():
			return 0, errReauthDue
		case p.session.reauthDue():
			// Mid-frame: the request loop re-authenticates once the frame
			// is through; until then poll, as when draining.
			p.client.SetReadDeadline(time.Now().Add(drainPoll))
		case p.activity.Load() != p.idleSeen || p.owed.Load() > 0:
			p.idleSeen = p.activity.Load()
			p.armReadDeadline(p.readDeadline())
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
