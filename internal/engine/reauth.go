package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/labels"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// KIP-368 for kproxy's own upstream login: when the broker gives the
// session a lifetime, the request loop re-authenticates on the same
// connection before it ends, instead of closing the pair and bouncing the
// client. The SaslHandshake and SaslAuthenticate requests are kproxy's own,
// written between two client requests; their entries in the owed queue
// tell the response loop to hand the responses back to the request loop
// rather than to the client. No client request is written while the
// exchange runs: a broker expects only SASL requests until it ends.

// kproxy re-authenticates at reauthAtPercent of the session lifetime, but
// at least reauthMargin before it ends (and never before half of it):
// early enough that its handshake, queued behind what the client is still
// owed (a long-poll fetch, say), reaches the broker in time. A broker
// refuses a re-authentication that begins within a second of the previous
// one (Kafka's MIN_REAUTH_INTERVAL_ONE_SECOND), measured from when it saw
// each begin, so for short lifetimes kproxy waits reauthMinSpacing (a
// second plus room for the two handshakes' different delays), as long as
// that still leaves a tenth of the lifetime.
const (
	reauthAtPercent  = 80
	reauthMargin     = time.Second
	reauthMinSpacing = 1500 * time.Millisecond
)

// reauthAfter is how long after a login kproxy re-authenticates a session
// of lifetime.
func reauthAfter(lifetime time.Duration) time.Duration {
	at := max(min(lifetime*reauthAtPercent/100, lifetime-reauthMargin), lifetime/2)
	return max(at, min(reauthMinSpacing, lifetime*9/10))
}

// errReauthDue interrupts the request loop's wait for the client's next
// frame when the upstream session is due for re-authentication.
var errReauthDue = errors.New("upstream SASL re-authentication due")

// ownResponse is a response to one of kproxy's own requests.
type ownResponse struct {
	resp kmsg.Response
	err  error
}

// upstreamSession is kproxy's own SASL login on a pair's upstream
// connection (upstream.sasl) and, when the broker gives it a lifetime
// (KIP-368), when it ends and when kproxy logs in again. The zero value is
// a connection without a session lifetime. Request loop only.
type upstreamSession struct {
	login auth.UpstreamSession
	// expiry is when the session ends and reauthAt when kproxy
	// re-authenticates it; zero if never.
	expiry, reauthAt time.Time
	// ownCorrelation numbers kproxy's own requests on the connection.
	ownCorrelation int32
}

// upstreamLogin is one completed login: when it began and the session it
// opened (zero without upstream.sasl).
type upstreamLogin struct {
	began   time.Time
	session auth.UpstreamSession
}

// begin records a completed login and schedules its re-authentication.
func (u *upstreamSession) begin(l upstreamLogin) {
	u.login = l.session
	if l.session.Lifetime <= 0 {
		u.expiry, u.reauthAt = time.Time{}, time.Time{}
		return
	}
	u.expiry = l.began.Add(l.session.Lifetime)
	u.reauthAt = l.began.Add(reauthAfter(l.session.Lifetime))
}

// reauthenticates reports whether the session has a lifetime, so kproxy
// re-authenticates it.
func (u *upstreamSession) reauthenticates() bool { return !u.reauthAt.IsZero() }

// reauthDue reports whether the session must be re-authenticated now.
func (u *upstreamSession) reauthDue() bool {
	return u.reauthenticates() && !time.Now().Before(u.reauthAt)
}

// expired reports whether the session is over.
func (u *upstreamSession) expired() bool {
	return !u.expiry.IsZero() && time.Now().After(u.expiry)
}

// nextCorrelation numbers one of kproxy's own requests. Negative: clients
// count up from 0, so the ids in kproxy's log and the broker's never look
// like a client's.
func (u *upstreamSession) nextCorrelation() int32 {
	u.ownCorrelation--
	return u.ownCorrelation
}

// readDeadline is the client read deadline: the idle timeout, or earlier
// the moment the upstream session is due for re-authentication, so that an
// idle client's pair wakes up for it.
func (p *pair) readDeadline() time.Time {
	d := time.Now().Add(p.s.cfg.Limits.IdleTimeout)
	if u := &p.session; u.reauthenticates() && u.reauthAt.Before(d) {
		return u.reauthAt
	}
	return d
}

// reauthenticateUpstream logs the upstream connection in again at a
// request boundary. Request loop only.
func (p *pair) reauthenticateUpstream(up *direction) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Until(p.session.expiry)+p.s.cfg.Upstream.DialTimeout)
	defer cancel()
	rt := &ownRequests{p: p, up: up, ctx: ctx}
	session, err := auth.Reauthenticate(ctx, rt, p.s.sec.upstreamMech, p.session.login.AuthenticateVersion, p.upstream.RemoteAddr().String())
	p.s.metrics.upstreamAuth.reauths.WithLabelValues(labels.ResultOf(err)).Inc()
	if err != nil {
		return fail(reasonDial, fmt.Errorf("upstream SASL re-authentication (KIP-368): %w", err))
	}
	p.session.begin(upstreamLogin{began: start, session: session})
	p.armReadDeadline(p.readDeadline())
	p.logger().Debug().Dur("took", time.Since(start)).Dur("session_lifetime", session.Lifetime).Msg("upstream SASL session re-authenticated")
	return nil
}

// ownRequests sends kproxy's own requests on a pair's upstream connection,
// between the client's, and waits for their responses. Request loop only.
type ownRequests struct {
	p   *pair
	up  *direction
	ctx context.Context
}

// RoundTrip implements auth.RoundTripper.
func (r *ownRequests) RoundTrip(req kmsg.Request) (kmsg.Response, error) {
	p := r.p
	corr := p.session.nextCorrelation()
	answer := make(chan ownResponse, 1)
	deliver := func(p *pair, owed pending, down *direction) error { return p.consumeOwnResponse(owed, down, answer) }
	if err := p.owe(pending{correlationID: corr, key: req.Key(), version: req.GetVersion(), deliver: deliver}); err != nil {
		return nil, err
	}
	frame := protocol.AppendRequestFrame(nil, protocol.RequestHeader{CorrelationID: corr, ClientID: "kproxy"}, req)
	if _, err := r.up.w.Write(frame); err != nil {
		return nil, fmt.Errorf("write upstream: %w", err)
	}
	if err := r.up.w.Flush(); err != nil {
		return nil, fmt.Errorf("write upstream: %w", err)
	}
	select {
	case res := <-answer:
		return res.resp, res.err
	case <-p.closed:
		return nil, errors.New("connection closed while waiting for the upstream")
	case <-r.ctx.Done():
		return nil, fmt.Errorf("%s response: %w", protocol.APIName(req.Key()), r.ctx.Err())
	}
}

// consumeOwnResponse reads the upstream's response to one of kproxy's own
// requests and hands it to the request loop on answer; the client never
// sees it. Response loop only.
func (p *pair) consumeOwnResponse(owed pending, down *direction, answer chan<- ownResponse) error {
	prefix, err := down.r.Peek(protocol.FrameSizeLen + 4)
	if err != nil {
		return upstreamReadError(err)
	}
	size, err := protocol.ParseFrameSize(prefix, maxUnauthenticatedFrame)
	if err != nil {
		return fail(reasonProtocol, fmt.Errorf("upstream response to kproxy's %s: %w", protocol.APIName(owed.key), err))
	}
	if corr, _ := protocol.ResponseCorrelationID(prefix[protocol.FrameSizeLen:]); corr != owed.correlationID {
		return fail(reasonProtocol, fmt.Errorf("upstream response has correlation id %d, expected %d for kproxy's %s v%d",
			corr, owed.correlationID, protocol.APIName(owed.key), owed.version))
	}
	frame := make([]byte, protocol.FrameSizeLen+int(size))
	if _, err := io.ReadFull(down.r, frame); err != nil {
		return upstreamReadError(err)
	}
	var res ownResponse
	body, err := wire.SkipResponseHeader(owed.key, owed.version, frame[protocol.FrameSizeLen:])
	if err == nil {
		res.resp, err = protocol.DecodeResponse(owed.key, owed.version, body)
	}
	res.err = err
	answer <- res // buffered for this one response
	return nil
}
