package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// maxUpstreamResponse bounds what AuthenticateConn reads per response:
// a SASL token plus room for an ApiVersions listing.
const maxUpstreamResponse = MaxTokenSize + 64<<10

// maxSASLRounds bounds a misbehaving upstream; SCRAM needs two.
const maxSASLRounds = 8

// UpstreamSession is what a completed upstream login established.
type UpstreamSession struct {
	// Lifetime is the session lifetime the broker set (KIP-368), 0 if it
	// set none. Before it ends the connection must be re-authenticated
	// (Reauthenticate) or replaced, or the broker closes it.
	Lifetime time.Duration
	// AuthenticateVersion is the SaslAuthenticate version the login used;
	// a re-authentication uses it again.
	AuthenticateVersion int16
}

// RoundTripper sends one request and returns its decoded response. A
// re-authentication runs over one, so that the proxy can interleave it with
// the client requests it relays on the same connection.
type RoundTripper interface {
	RoundTrip(req kmsg.Request) (kmsg.Response, error)
}

// AuthenticateConn logs conn in to a Kafka broker with mech, before any
// other request is sent on it: ApiVersions v0 (to learn which
// SaslAuthenticate versions the broker has), SaslHandshake v1, then
// SaslAuthenticate at the highest version both sides know (up to v2) until
// the mechanism is done. clientID goes in every request header.
//
// ctx bounds the whole exchange (conn's deadline is cleared on return). A
// broker's error code comes back as an *UpstreamError. Brokers that close
// the connection instead of answering (old ones, and kfake, on wrong
// credentials) give an error wrapping io.EOF or
// io.ErrUnexpectedEOF. On any error, close conn.
func AuthenticateConn(ctx context.Context, conn net.Conn, mech sasl.Mechanism, clientID string) (UpstreamSession, error) {
	var session UpstreamSession
	err := withDeadline(ctx, conn, func() (err error) {
		session, err = authenticateConn(ctx, &upstreamConn{conn: conn, clientID: clientID}, mech)
		return err
	})
	return session, err
}

// Request sends req on conn, which must have nothing else in flight, and
// returns its decoded response, within ctx (conn's deadline is cleared on
// return). clientID goes in the request header. On error, close conn.
func Request(ctx context.Context, conn net.Conn, clientID string, req kmsg.Request) (kmsg.Response, error) {
	var resp kmsg.Response
	err := withDeadline(ctx, conn, func() (err error) {
		resp, err = (&upstreamConn{conn: conn, clientID: clientID}).RoundTrip(req)
		return err
	})
	return resp, err
}

// withDeadline runs exchange on conn bounded by ctx: ctx's deadline is
// conn's, and cancelling ctx interrupts blocked reads and writes.
func withDeadline(ctx context.Context, conn net.Conn, exchange func() error) error {
	if d, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(d); err != nil {
			return fmt.Errorf("upstream: set deadline: %w", err)
		}
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	err := exchange()
	if !stop() && err == nil {
		// Cancelled at the last moment: the deadline may now be in the
		// past, so the connection is unusable.
		err = fmt.Errorf("upstream: %w", context.Cause(ctx))
	}
	if err != nil {
		if ctxErr := context.Cause(ctx); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%w)", err, ctxErr)
		}
		return err
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		return fmt.Errorf("upstream: clear deadline: %w", err)
	}
	return nil
}

func authenticateConn(ctx context.Context, uc *upstreamConn, mech sasl.Mechanism) (UpstreamSession, error) {
	kresp, err := uc.RoundTrip(&kmsg.ApiVersionsRequest{Version: 0})
	if err != nil {
		return UpstreamSession{}, fmt.Errorf("upstream SASL: %w", err)
	}
	versions := kresp.(*kmsg.ApiVersionsResponse)
	if versions.ErrorCode != 0 {
		return UpstreamSession{}, &UpstreamError{Request: "ApiVersions", Mechanism: mech.Name(), Code: versions.ErrorCode}
	}
	authVersion := int16(-1)
	for _, k := range versions.ApiKeys {
		if k.ApiKey == wire.SASLAuthenticateKey {
			authVersion = min(k.MaxVersion, (&kmsg.SASLAuthenticateRequest{}).MaxVersion())
		}
	}
	if authVersion < 0 {
		return UpstreamSession{}, errors.New("upstream SASL: the broker has no SaslAuthenticate (Kafka before 1.0 is not supported)")
	}
	return saslExchange(ctx, uc, mech, authVersion, uc.conn.RemoteAddr().String())
}

// Reauthenticate logs an authenticated connection in again (KIP-368)
// before its session lifetime ends: SaslHandshake v1 and SaslAuthenticate
// at version, the one the first login used, over rt. host is what the
// mechanism is told the server is. The principal must stay the same; the
// broker refuses anything else.
func Reauthenticate(ctx context.Context, rt RoundTripper, mech sasl.Mechanism, version int16, host string) (UpstreamSession, error) {
	return saslExchange(ctx, rt, mech, version, host)
}

// saslExchange runs SaslHandshake v1 and the SaslAuthenticate rounds of mech.
func saslExchange(ctx context.Context, rt RoundTripper, mech sasl.Mechanism, authVersion int16, host string) (UpstreamSession, error) {
	name := mech.Name()
	kresp, err := rt.RoundTrip(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: name})
	if err != nil {
		return UpstreamSession{}, fmt.Errorf("upstream SASL: %w", err)
	}
	if hs := kresp.(*kmsg.SASLHandshakeResponse); hs.ErrorCode != 0 {
		return UpstreamSession{}, &UpstreamError{Request: "SaslHandshake", Mechanism: name, Code: hs.ErrorCode, Supported: hs.SupportedMechanisms}
	}

	session, msg, err := mech.Authenticate(ctx, host)
	if err != nil {
		return UpstreamSession{}, fmt.Errorf("upstream SASL %s: start: %w", name, err)
	}
	for round := 0; ; round++ {
		if round == maxSASLRounds {
			return UpstreamSession{}, fmt.Errorf("upstream SASL %s: not done after %d rounds", name, maxSASLRounds)
		}
		kresp, err := rt.RoundTrip(&kmsg.SASLAuthenticateRequest{Version: authVersion, SASLAuthBytes: msg})
		if err != nil {
			return UpstreamSession{}, fmt.Errorf("upstream SASL %s: %w", name, err)
		}
		resp := kresp.(*kmsg.SASLAuthenticateResponse)
		if resp.ErrorCode != 0 {
			e := &UpstreamError{Request: "SaslAuthenticate", Mechanism: name, Code: resp.ErrorCode}
			if resp.ErrorMessage != nil {
				e.Message = *resp.ErrorMessage
			}
			return UpstreamSession{}, e
		}
		done, next, err := session.Challenge(resp.SASLAuthBytes)
		if err != nil {
			return UpstreamSession{}, fmt.Errorf("upstream SASL %s: %w", name, err)
		}
		// A mechanism may finish with a last message whose answer it does
		// not need; Kafka answers it anyway, so it is sent and checked.
		if done && len(next) == 0 {
			return UpstreamSession{
				Lifetime:            time.Duration(resp.SessionLifetimeMillis) * time.Millisecond,
				AuthenticateVersion: authVersion,
			}, nil
		}
		msg = next
	}
}

// upstreamConn sends requests one at a time and reads their responses.
type upstreamConn struct {
	conn     net.Conn
	clientID string
	corr     int32
}

// RoundTrip implements RoundTripper.
func (u *upstreamConn) RoundTrip(req kmsg.Request) (kmsg.Response, error) {
	u.corr++
	key, version := req.Key(), req.GetVersion()
	name := protocol.APIName(key)
	frame := protocol.AppendRequestFrame(nil, protocol.RequestHeader{CorrelationID: u.corr, ClientID: u.clientID}, req)
	if _, err := u.conn.Write(frame); err != nil {
		return nil, fmt.Errorf("send %s v%d: %w", name, version, err)
	}
	var prefix [protocol.FrameSizeLen]byte
	if _, err := io.ReadFull(u.conn, prefix[:]); err != nil {
		return nil, fmt.Errorf("read %s v%d response: %w", name, version, err)
	}
	size, err := protocol.ParseFrameSize(prefix[:], maxUpstreamResponse)
	if err != nil {
		return nil, fmt.Errorf("read %s v%d response: %w", name, version, err)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(u.conn, body); err != nil {
		return nil, fmt.Errorf("read %s v%d response: %w", name, version, err)
	}
	corr, err := protocol.ResponseCorrelationID(body)
	if err != nil {
		return nil, fmt.Errorf("read %s v%d response: %w", name, version, err)
	}
	if corr != u.corr {
		return nil, fmt.Errorf("%s v%d response has correlation id %d, want %d", name, version, corr, u.corr)
	}
	body, err = wire.SkipResponseHeader(key, version, body)
	if err != nil {
		return nil, fmt.Errorf("read %s v%d response: %w", name, version, err)
	}
	resp, err := protocol.DecodeResponse(key, version, body)
	if err != nil {
		return nil, fmt.Errorf("read %s v%d response: %w", name, version, err)
	}
	return resp, nil
}
