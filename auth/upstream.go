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

	"github.com/kproxy/kproxy/protocol"
)

// maxUpstreamResponse bounds what AuthenticateConn reads per response:
// a SASL token plus room for an ApiVersions listing.
const maxUpstreamResponse = MaxTokenSize + 64<<10

// maxSASLRounds bounds a misbehaving upstream; SCRAM needs two.
const maxSASLRounds = 8

// AuthenticateConn logs conn in to a Kafka broker with mech, before any
// other request is sent on it: ApiVersions v0 (to learn which
// SaslAuthenticate versions the broker has), SaslHandshake v1, then
// SaslAuthenticate at the highest version both sides know (up to v2) until
// the mechanism is done. clientID goes in every request header.
//
// It returns the session lifetime the broker set (KIP-368), or 0 if it set
// none; before the lifetime ends the connection must be re-authenticated or
// replaced, or the broker closes it.
//
// ctx bounds the whole exchange (conn's deadline is cleared on return). A
// broker's error code comes back as an *UpstreamError. Brokers that close
// the connection instead of answering (old ones, and kfake, on wrong
// credentials) give an error wrapping io.EOF or
// io.ErrUnexpectedEOF. On any error, close conn.
func AuthenticateConn(ctx context.Context, conn net.Conn, mech sasl.Mechanism, clientID string) (time.Duration, error) {
	if d, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(d); err != nil {
			return 0, fmt.Errorf("upstream SASL: set deadline: %w", err)
		}
	}
	// Cancellation interrupts blocked reads and writes through the deadline.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	lifetime, err := authenticateConn(ctx, &upstreamConn{conn: conn, clientID: clientID}, mech)
	if !stop() && err == nil {
		// Cancelled at the last moment: the deadline may now be in the
		// past, so the connection is unusable.
		err = fmt.Errorf("upstream SASL: %w", context.Cause(ctx))
	}
	if err != nil {
		if ctxErr := context.Cause(ctx); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%w)", err, ctxErr)
		}
		return 0, err
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		return 0, fmt.Errorf("upstream SASL: clear deadline: %w", err)
	}
	return lifetime, nil
}

func authenticateConn(ctx context.Context, uc *upstreamConn, mech sasl.Mechanism) (time.Duration, error) {
	name := mech.Name()
	kresp, err := uc.roundTrip(&kmsg.ApiVersionsRequest{Version: 0})
	if err != nil {
		return 0, fmt.Errorf("upstream SASL: %w", err)
	}
	versions := kresp.(*kmsg.ApiVersionsResponse)
	if versions.ErrorCode != 0 {
		return 0, &UpstreamError{Request: "ApiVersions", Mechanism: name, Code: versions.ErrorCode}
	}
	authVersion := int16(-1)
	for _, k := range versions.ApiKeys {
		if k.ApiKey == protocol.SASLAuthenticateKey {
			authVersion = min(k.MaxVersion, (&kmsg.SASLAuthenticateRequest{}).MaxVersion())
		}
	}
	if authVersion < 0 {
		return 0, errors.New("upstream SASL: the broker has no SaslAuthenticate (Kafka before 1.0 is not supported)")
	}

	kresp, err = uc.roundTrip(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: name})
	if err != nil {
		return 0, fmt.Errorf("upstream SASL: %w", err)
	}
	if hs := kresp.(*kmsg.SASLHandshakeResponse); hs.ErrorCode != 0 {
		return 0, &UpstreamError{Request: "SaslHandshake", Mechanism: name, Code: hs.ErrorCode, Supported: hs.SupportedMechanisms}
	}

	session, msg, err := mech.Authenticate(ctx, uc.conn.RemoteAddr().String())
	if err != nil {
		return 0, fmt.Errorf("upstream SASL %s: start: %w", name, err)
	}
	for round := 0; ; round++ {
		if round == maxSASLRounds {
			return 0, fmt.Errorf("upstream SASL %s: not done after %d rounds", name, maxSASLRounds)
		}
		kresp, err := uc.roundTrip(&kmsg.SASLAuthenticateRequest{Version: authVersion, SASLAuthBytes: msg})
		if err != nil {
			return 0, fmt.Errorf("upstream SASL %s: %w", name, err)
		}
		resp := kresp.(*kmsg.SASLAuthenticateResponse)
		if resp.ErrorCode != 0 {
			e := &UpstreamError{Request: "SaslAuthenticate", Mechanism: name, Code: resp.ErrorCode}
			if resp.ErrorMessage != nil {
				e.Message = *resp.ErrorMessage
			}
			return 0, e
		}
		done, next, err := session.Challenge(resp.SASLAuthBytes)
		if err != nil {
			return 0, fmt.Errorf("upstream SASL %s: %w", name, err)
		}
		// A mechanism may finish with a last message whose answer it does
		// not need; Kafka answers it anyway, so it is sent and checked.
		if done && len(next) == 0 {
			return time.Duration(resp.SessionLifetimeMillis) * time.Millisecond, nil
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

func (u *upstreamConn) roundTrip(req kmsg.Request) (kmsg.Response, error) {
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
	body, err = protocol.SkipResponseHeader(key, version, body)
	if err != nil {
		return nil, fmt.Errorf("read %s v%d response: %w", name, version, err)
	}
	resp, err := protocol.DecodeResponse(key, version, body)
	if err != nil {
		return nil, fmt.Errorf("read %s v%d response: %w", name, version, err)
	}
	return resp, nil
}
