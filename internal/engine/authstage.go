package engine

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/protocol"
)

// authStage is a pair's client authentication, the stage every client
// frame passes before the request filters: what the client must do before
// its requests reach the upstream, and what kproxy learns from it (the
// user). There is one implementation per listeners.sasl.mode:
// terminateAuth (kproxy is the client's SASL server), passthroughAuth (the
// upstream is, and kproxy watches the exchange go by) and noAuth.
//
// The request loop calls every method but authenticated, which any
// goroutine may call.
type authStage interface {
	// frameLimit is the largest frame the client may send next, given the
	// configured limits.max_frame_bytes.
	frameLimit(configured int32) int32
	// token takes the client's next frame of frameLen bytes when it is a
	// raw SASL token (after a v0 SaslHandshake), which has no request
	// header, and returns it ready to forward. isToken false: the frame is
	// a request, left unread in cr. When err is set the pair ends.
	token(cr *bufio.Reader, frameLen int) (tok clientRequest, isToken bool, err error)
	// request applies the stage's rules to r, a request with header h
	// whose frame is still in cr, before any filter sees it, and returns it
	// as it goes on. The stage may answer it itself (owed.local), reading
	// its frame (r.frame: the caller must not read it again), and may want
	// the pair closed once that answer is delivered (r.closeAfter: the
	// client reads why first). err refuses the request: the pair ends.
	request(h protocol.RequestHeader, cr *bufio.Reader, r clientRequest) (clientRequest, error)
	// upstreamConnected runs on a fresh upstream connection, before any
	// client request is written on it.
	upstreamConnected(ctx context.Context, conn net.Conn) error
	// authenticated reports whether the client has authenticated; it is
	// true from the start on a listener without SASL.
	authenticated() bool
}

// newAuthStage gives p the auth stage of its listener's SASL mode.
func newAuthStage(p *pair) (authStage, error) {
	switch p.s.sec.saslMode {
	case config.SASLModeTerminate:
		a, err := auth.NewAuthenticator(p.s.sec.saslOpts)
		if err != nil {
			return nil, fail(reasonAuth, err)
		}
		return &terminateAuth{saslProgress: saslProgress{p: p}, authn: a}, nil
	case config.SASLModePassthrough:
		return &passthroughAuth{saslProgress: saslProgress{p: p}}, nil
	}
	return noAuth{}, nil
}

// enforceHandshakeTimeout closes p if its client has not authenticated
// within limits.handshake_timeout.
func (p *pair) enforceHandshakeTimeout() {
	if p.auth.authenticated() {
		return
	}
	timeout := p.s.cfg.Limits.HandshakeTimeout
	t := time.AfterFunc(timeout, func() {
		if !p.auth.authenticated() {
			p.close(fail(reasonAuth, fmt.Errorf("not authenticated within limits.handshake_timeout (%s)", timeout)))
		}
	})
	go func() { <-p.closed; t.Stop() }()
}

// noAuth is the auth stage of a listener without SASL: every frame is a
// request, and every request goes on to the filters.
type noAuth struct{}

func (noAuth) frameLimit(configured int32) int32 { return configured }

func (noAuth) token(*bufio.Reader, int) (clientRequest, bool, error) {
	return clientRequest{}, false, nil
}

func (noAuth) request(_ protocol.RequestHeader, _ *bufio.Reader, r clientRequest) (clientRequest, error) {
	return r, nil
}

func (noAuth) upstreamConnected(context.Context, net.Conn) error { return nil }

func (noAuth) authenticated() bool { return true }

// saslProgress is what both SASL stages keep: their pair, and whether the
// client has authenticated, which the handshake timer reads from another
// goroutine.
type saslProgress struct {
	p    *pair
	done atomic.Bool
}

func (s *saslProgress) authenticated() bool { return s.done.Load() }

// finish records that the client has authenticated: its handshake is over
// (limits.max_handshakes counts it no more). Cheap once done, as it runs
// per request in passthrough mode.
func (s *saslProgress) finish() {
	if s.done.Load() {
		return
	}
	s.done.Store(true)
	s.p.s.handshakeDone(s.p.admission)
}

// closeAfterAnswer is the delivery of an answer after which the pair must
// close: the answer, flushed, then why as the response loop's error.
func closeAfterAnswer(why error) deliverFunc {
	return func(p *pair, owed pending, down *direction) error {
		if _, err := down.w.Write(owed.local); err != nil {
			return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
		}
		down.w.Flush()
		return why
	}
}
