package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"github.com/kproxy/kproxy/internal/testkit/idp"
	"github.com/kproxy/kproxy/internal/wire"
)

func newOAuthAuthenticator(t *testing.T, p *idp.IdP, clock *fakeClock, lifetime time.Duration) *Authenticator {
	t.Helper()
	v := newTestValidator(t, p, idpKeySet(t, p, 0), func(o *JWTValidatorOptions) { o.Now = clock.now })
	a, err := NewAuthenticator(Options{Mechanisms: []string{OAuthBearer}, OAuthBearer: v, SessionLifetime: lifetime, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// oauthLogin runs one OAUTHBEARER exchange as franz-go's sasl/oauth does
// (answering an error challenge with %x01) and returns the last response.
func oauthLogin(t *testing.T, a *Authenticator, token string) (*kmsg.SASLAuthenticateResponse, error) {
	t.Helper()
	if hs := a.Handshake(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: OAuthBearer}); hs.ErrorCode != 0 {
		t.Fatalf("handshake: error %d", hs.ErrorCode)
	}
	cs, msg, err := oauth.Auth{Token: token}.AsMechanism().Authenticate(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for {
		resp, done, err := a.Authenticate(&kmsg.SASLAuthenticateRequest{Version: 2, SASLAuthBytes: msg})
		resp = roundTrip(t, resp, &kmsg.SASLAuthenticateResponse{})
		if err != nil || done {
			return resp, err
		}
		_, next, cerr := cs.Challenge(resp.SASLAuthBytes)
		if cerr != nil {
			t.Fatalf("client: %v", cerr)
		}
		msg = next
	}
}

func TestOAuthBearerSessionLifetimeIsTheTokens(t *testing.T) {
	p := startIdP(t)
	clock := &fakeClock{t: time.Now()}
	for _, tc := range []struct {
		configured, want time.Duration
	}{
		{0, 4 * time.Minute},         // the token's remaining lifetime
		{time.Minute, time.Minute},   // capped by session_lifetime
		{time.Hour, 4 * time.Minute}, // never beyond the token
	} {
		a := newOAuthAuthenticator(t, p, clock, tc.configured)
		exp := clock.t.Add(4 * time.Minute)
		resp, err := oauthLogin(t, a, p.Mint(map[string]any{"sub": "alice", "exp": exp.Unix(), "groups": []string{"payments"}}))
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("login: code %d %v", resp.ErrorCode, err)
		}
		got := time.Duration(resp.SessionLifetimeMillis) * time.Millisecond
		if d := got - tc.want; d < -time.Second || d > time.Second {
			t.Fatalf("configured %s: lifetime %s, want %s", tc.configured, got, tc.want)
		}
		if a.User() != "alice" || strings.Join(a.Claims()["groups"], ",") != "payments" {
			t.Fatalf("user %q claims %v", a.User(), a.Claims())
		}
		if a.SessionExpiry().After(exp) {
			t.Fatalf("session ends %s after the token", a.SessionExpiry().Sub(exp))
		}
	}
}

func TestOAuthBearerInvalidTokenGetsChallengeThenFailure(t *testing.T) {
	p := startIdP(t)
	a := newOAuthAuthenticator(t, p, &fakeClock{t: time.Now()}, 0)
	if hs := a.Handshake(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: OAuthBearer}); hs.ErrorCode != 0 {
		t.Fatal(hs.ErrorCode)
	}
	token := p.Mint(map[string]any{"sub": "alice", "aud": "billing"})
	_, first, _ := oauth.Auth{Token: token}.AsMechanism().Authenticate(context.Background(), "")
	resp, done, err := a.Authenticate(&kmsg.SASLAuthenticateRequest{Version: 1, SASLAuthBytes: first})
	if err != nil || done || resp.ErrorCode != 0 || string(resp.SASLAuthBytes) != `{"status":"invalid_token"}` {
		t.Fatalf("first step: code %d bytes %q done %v err %v", resp.ErrorCode, resp.SASLAuthBytes, done, err)
	}
	if a.Authenticated() {
		t.Fatal("authenticated after the challenge")
	}
	resp, done, err = a.Authenticate(&kmsg.SASLAuthenticateRequest{Version: 1, SASLAuthBytes: []byte{0x01}})
	if done || resp.ErrorCode != wire.ErrCodeSASLAuthenticationFailed || !errors.Is(err, ErrAuthenticationFailed) {
		t.Fatalf("second step: code %d done %v err %v", resp.ErrorCode, done, err)
	}
	if !strings.Contains(err.Error(), `audience "billing" does not include the expected "kafka"`) || strings.Contains(err.Error(), token) {
		t.Fatalf("log reason %q", err)
	}
	if strings.Contains(*resp.ErrorMessage, "billing") {
		t.Fatalf("the client is told the reason: %q", *resp.ErrorMessage)
	}
	if a.Admit(wire.MetadataKey) == nil {
		t.Fatal("a failed client is admitted")
	}
}

func TestOAuthBearerReauthentication(t *testing.T) {
	p := startIdP(t)
	clock := &fakeClock{t: time.Now()}
	a := newOAuthAuthenticator(t, p, clock, 0)
	if resp, err := oauthLogin(t, a, p.Mint(map[string]any{"sub": "alice", "exp": clock.t.Add(10 * time.Second).Unix(), "groups": "a"})); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("login: %v", err)
	}
	clock.t = clock.t.Add(11 * time.Second)
	if err := a.Admit(wire.MetadataKey); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("request after the token expired: %v", err)
	}
	// A fresh token for the same principal re-authenticates in place, with
	// the new token's lifetime and claims.
	p.Rotate()
	resp, err := oauthLogin(t, a, p.Mint(map[string]any{"sub": "alice", "exp": clock.t.Add(time.Minute).Unix(), "groups": "b"}))
	if err != nil || resp.ErrorCode != 0 || resp.SessionLifetimeMillis < 59_000 {
		t.Fatalf("re-authentication: code %d lifetime %d %v", resp.ErrorCode, resp.SessionLifetimeMillis, err)
	}
	if err := a.Admit(wire.MetadataKey); err != nil || a.Claims()["groups"][0] != "b" {
		t.Fatalf("after re-authentication: %v, claims %v", err, a.Claims())
	}
	// Another principal may not take the connection over.
	clock.t = clock.t.Add(2 * time.Second)
	if _, err := oauthLogin(t, a, p.Mint(map[string]any{"sub": "mallory", "exp": clock.t.Add(time.Minute).Unix()})); err == nil ||
		!strings.Contains(err.Error(), "different user") {
		t.Fatalf("re-authentication as another principal: %v", err)
	}
}

func TestOAuthBearerUnframed(t *testing.T) {
	p := startIdP(t)
	a := newOAuthAuthenticator(t, p, &fakeClock{t: time.Now()}, 0)
	a.Handshake(&kmsg.SASLHandshakeRequest{Version: 0, Mechanism: OAuthBearer})
	_, first, _ := oauth.Auth{Token: p.Mint(map[string]any{"sub": "bob"})}.AsMechanism().Authenticate(context.Background(), "")
	out, done, err := a.Unframed(first)
	if err != nil || !done || len(out) != 0 || a.User() != "bob" {
		t.Fatalf("v0 login: %q %v %v user %q", out, done, err, a.User())
	}
	// A refused token: the challenge as a raw token, then failure (the
	// proxy closes the connection: a v0 client cannot be told why).
	a = newOAuthAuthenticator(t, p, &fakeClock{t: time.Now()}, 0)
	a.Handshake(&kmsg.SASLHandshakeRequest{Version: 0, Mechanism: OAuthBearer})
	_, first, _ = oauth.Auth{Token: p.Mint(map[string]any{"sub": "bob"}, idp.AlgNone())}.AsMechanism().Authenticate(context.Background(), "")
	out, done, err = a.Unframed(first)
	if err != nil || done || string(out) != `{"status":"invalid_token"}` {
		t.Fatalf("v0 refused token, first step: %q %v %v", out, done, err)
	}
	if _, done, err = a.Unframed([]byte{0x01}); done || !errors.Is(err, ErrAuthenticationFailed) || !strings.Contains(err.Error(), `"none" is not allowed`) {
		t.Fatalf("v0 refused token, second step: %v %v", done, err)
	}
}

func TestNewAuthenticatorNeedsAValidatorForOAuthBearer(t *testing.T) {
	if _, err := NewAuthenticator(Options{Mechanisms: []string{OAuthBearer}}); err == nil {
		t.Fatal("OAUTHBEARER without a validator accepted")
	}
	if _, err := NewAuthenticator(Options{Mechanisms: []string{OAuthBearer, Plain}, OAuthBearer: acceptAll{}}); err == nil {
		t.Fatal("PLAIN without a store accepted")
	}
	if _, err := NewAuthenticator(Options{Mechanisms: []string{OAuthBearer}, OAuthBearer: acceptAll{}}); err != nil {
		t.Fatalf("OAUTHBEARER alone: %v", err)
	}
}
