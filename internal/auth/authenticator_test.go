package auth

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newTestAuthenticator(t *testing.T, lifetime time.Duration, clock *fakeClock, mechs ...string) *Authenticator {
	t.Helper()
	if len(mechs) == 0 {
		mechs = []string{ScramSHA512, ScramSHA256, Plain}
	}
	opts := Options{Mechanisms: mechs, Store: testStore(t), SessionLifetime: lifetime}
	if clock != nil {
		opts.Now = clock.now
	}
	a, err := NewAuthenticator(opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// roundTrip encodes a response and decodes it at the same version, as the
// client would read it.
func roundTrip[R kmsg.Response](t *testing.T, resp R, fresh R) R {
	t.Helper()
	fresh.SetVersion(resp.GetVersion())
	if err := fresh.ReadFrom(resp.AppendTo(nil)); err != nil {
		t.Fatalf("decode %T v%d: %v", resp, resp.GetVersion(), err)
	}
	return fresh
}

// authenticateFramed runs mech through Handshake v1 and SaslAuthenticate at
// authVersion and returns the last response.
func authenticateFramed(t *testing.T, a *Authenticator, mech sasl.Mechanism, authVersion int16) (*kmsg.SASLAuthenticateResponse, error) {
	t.Helper()
	hs := a.Handshake(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: mech.Name()})
	if hs.ErrorCode != 0 {
		t.Fatalf("handshake %s: error %d", mech.Name(), hs.ErrorCode)
	}
	cs, msg, err := mech.Authenticate(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for {
		resp, done, err := a.Authenticate(&kmsg.SASLAuthenticateRequest{Version: authVersion, SASLAuthBytes: msg})
		resp = roundTrip(t, resp, &kmsg.SASLAuthenticateResponse{})
		if err != nil {
			return resp, err
		}
		cdone, next, cerr := cs.Challenge(resp.SASLAuthBytes)
		if cerr != nil {
			t.Fatalf("client: %v", cerr)
		}
		if done {
			if !cdone {
				t.Fatal("server done, client not")
			}
			return resp, nil
		}
		msg = next
	}
}

func TestAuthenticatorHandshakeV1(t *testing.T) {
	for _, tc := range []struct {
		mech sasl.Mechanism
		user string
	}{
		{plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism(), "alice"},
		{scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism(), "alice"},
		{scram.Auth{User: "we,ird=name", Pass: "weird-secret"}.AsSha512Mechanism(), "we,ird=name"},
	} {
		a := newTestAuthenticator(t, 0, nil)
		if a.Authenticated() || a.ExpectUnframed() {
			t.Fatal("fresh authenticator claims progress")
		}
		resp, err := authenticateFramed(t, a, tc.mech, 2)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("%s: code %d, %v", tc.mech.Name(), resp.ErrorCode, err)
		}
		if !a.Authenticated() || a.User() != tc.user || a.Mechanism() != tc.mech.Name() || !a.SessionExpiry().IsZero() {
			t.Fatalf("%s: authenticated %v user %q mechanism %q expiry %v", tc.mech.Name(), a.Authenticated(), a.User(), a.Mechanism(), a.SessionExpiry())
		}
		// Another handshake without a session lifetime is out of turn.
		hs := a.Handshake(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: tc.mech.Name()})
		if hs.ErrorCode != wire.ErrCodeIllegalSASLState || a.Authenticated() {
			t.Fatalf("second handshake: code %d, authenticated %v", hs.ErrorCode, a.Authenticated())
		}
	}
}

func TestAuthenticatorWrongCredentials(t *testing.T) {
	for _, mech := range []sasl.Mechanism{
		plain.Auth{User: "alice", Pass: "guess-1"}.AsMechanism(),
		scram.Auth{User: "alice", Pass: "guess-1"}.AsSha512Mechanism(),
		scram.Auth{User: "nobody", Pass: "guess-1"}.AsSha256Mechanism(),
	} {
		a := newTestAuthenticator(t, time.Hour, nil)
		resp, err := authenticateFramed(t, a, mech, 1)
		if !errors.Is(err, ErrAuthenticationFailed) || resp.ErrorCode != wire.ErrCodeSASLAuthenticationFailed {
			t.Fatalf("%s: code %d, %v", mech.Name(), resp.ErrorCode, err)
		}
		if resp.ErrorMessage == nil || !strings.Contains(*resp.ErrorMessage, mech.Name()) {
			t.Fatalf("%s: message %v does not name the mechanism", mech.Name(), resp.ErrorMessage)
		}
		// The client is not told whether the user exists.
		if strings.Contains(*resp.ErrorMessage, "unknown") || strings.Contains(*resp.ErrorMessage, "nobody") {
			t.Fatalf("message %q tells too much", *resp.ErrorMessage)
		}
		assertNoSecret(t, *resp.ErrorMessage+err.Error(), "guess-1")
		if a.Authenticated() || resp.SessionLifetimeMillis != 0 {
			t.Fatalf("failed login: authenticated %v, lifetime %d", a.Authenticated(), resp.SessionLifetimeMillis)
		}
		// After a failure nothing more is accepted.
		r, _, err := a.Authenticate(&kmsg.SASLAuthenticateRequest{Version: 1})
		if r.ErrorCode != wire.ErrCodeIllegalSASLState || !errors.Is(err, ErrIllegalState) {
			t.Fatalf("authenticate after failure: %d, %v", r.ErrorCode, err)
		}
	}
}

func TestAuthenticatorUnsupportedMechanism(t *testing.T) {
	a := newTestAuthenticator(t, 0, nil, ScramSHA256, ScramSHA512)
	for _, v := range []int16{0, 1} {
		for _, m := range []string{"PLAIN", "GSSAPI", "scram-sha-256"} {
			a := newTestAuthenticator(t, 0, nil, ScramSHA256, ScramSHA512)
			hs := roundTrip(t, a.Handshake(&kmsg.SASLHandshakeRequest{Version: v, Mechanism: m}), &kmsg.SASLHandshakeResponse{})
			if hs.ErrorCode != wire.ErrCodeUnsupportedSASLMechanism || !slices.Equal(hs.SupportedMechanisms, []string{ScramSHA256, ScramSHA512}) {
				t.Fatalf("v%d %s: code %d, mechanisms %v", v, m, hs.ErrorCode, hs.SupportedMechanisms)
			}
		}
	}
	// A successful handshake lists them too, as Kafka does.
	hs := a.Handshake(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: ScramSHA512})
	if hs.ErrorCode != 0 || len(hs.SupportedMechanisms) != 2 {
		t.Fatalf("ok handshake: %d %v", hs.ErrorCode, hs.SupportedMechanisms)
	}
}

func TestAuthenticatorOutOfOrder(t *testing.T) {
	a := newTestAuthenticator(t, 0, nil)
	resp, _, err := a.Authenticate(&kmsg.SASLAuthenticateRequest{Version: 1})
	if resp.ErrorCode != wire.ErrCodeIllegalSASLState || !errors.Is(err, ErrIllegalState) || !strings.Contains(*resp.ErrorMessage, "expecting SaslHandshake") {
		t.Fatalf("authenticate before handshake: %d %v", resp.ErrorCode, err)
	}
	a = newTestAuthenticator(t, 0, nil)
	a.Handshake(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: ScramSHA256})
	if hs := a.Handshake(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: ScramSHA256}); hs.ErrorCode != wire.ErrCodeIllegalSASLState {
		t.Fatalf("handshake twice: %d", hs.ErrorCode)
	}
	a = newTestAuthenticator(t, 0, nil)
	a.Handshake(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: Plain})
	if _, _, err := a.Unframed([]byte("\x00alice\x00alice-secret")); !errors.Is(err, ErrIllegalState) {
		t.Fatalf("unframed token after a v1 handshake: %v", err)
	}
	if a.Authenticated() {
		t.Fatal("authenticated after an illegal token")
	}
	a = newTestAuthenticator(t, 0, nil)
	a.Handshake(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: Plain})
	big := make([]byte, MaxTokenSize+1)
	if resp, _, err := a.Authenticate(&kmsg.SASLAuthenticateRequest{SASLAuthBytes: big}); resp.ErrorCode != wire.ErrCodeSASLAuthenticationFailed || err == nil {
		t.Fatalf("oversized token: %d %v", resp.ErrorCode, err)
	}
}

// A v0 handshake is followed by raw tokens, not SaslAuthenticate requests.
func TestAuthenticatorHandshakeV0(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	a := newTestAuthenticator(t, time.Hour, clock)
	hs := roundTrip(t, a.Handshake(&kmsg.SASLHandshakeRequest{Version: 0, Mechanism: Plain}), &kmsg.SASLHandshakeResponse{})
	if hs.ErrorCode != 0 || !a.ExpectUnframed() {
		t.Fatalf("v0 handshake: code %d, expect unframed %v", hs.ErrorCode, a.ExpectUnframed())
	}
	out, done, err := a.Unframed([]byte("\x00alice\x00alice-secret"))
	if err != nil || !done || out == nil || len(out) != 0 {
		t.Fatalf("PLAIN token: %q %v %v", out, done, err)
	}
	// A v0 client cannot be told the lifetime, but it has one.
	if !a.Authenticated() || a.ExpectUnframed() || !a.SessionExpiry().Equal(clock.t.Add(time.Hour)) {
		t.Fatalf("after v0 PLAIN: authenticated %v, unframed %v, expiry %v (want the lifetime)", a.Authenticated(), a.ExpectUnframed(), a.SessionExpiry())
	}

	// SCRAM over v0 takes two raw tokens.
	a = newTestAuthenticator(t, 0, nil)
	a.Handshake(&kmsg.SASLHandshakeRequest{Version: 0, Mechanism: ScramSHA256})
	cs, first, _ := scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha256Mechanism().Authenticate(context.Background(), "")
	out, done, err = a.Unframed(first)
	if err != nil || done {
		t.Fatalf("client-first: %v %v", done, err)
	}
	_, final, err := cs.Challenge(out)
	if err != nil {
		t.Fatal(err)
	}
	out, done, err = a.Unframed(final)
	if err != nil || !done || a.User() != "bob" {
		t.Fatalf("client-final: %v %v user %q", done, err, a.User())
	}
	if cdone, _, err := cs.Challenge(out); !cdone || err != nil {
		t.Fatalf("client rejects server-final: %v", err)
	}
	// SaslAuthenticate after a v0 handshake is out of turn.
	a = newTestAuthenticator(t, 0, nil)
	a.Handshake(&kmsg.SASLHandshakeRequest{Version: 0, Mechanism: Plain})
	if resp, _, err := a.Authenticate(&kmsg.SASLAuthenticateRequest{SASLAuthBytes: []byte("\x00alice\x00alice-secret")}); resp.ErrorCode != wire.ErrCodeIllegalSASLState || err == nil {
		t.Fatalf("SaslAuthenticate after v0 handshake: %d %v", resp.ErrorCode, err)
	}
	// A wrong raw token ends it with an error (the proxy closes).
	a = newTestAuthenticator(t, 0, nil)
	a.Handshake(&kmsg.SASLHandshakeRequest{Version: 0, Mechanism: Plain})
	if _, _, err := a.Unframed([]byte("\x00alice\x00guess-2")); !errors.Is(err, ErrAuthenticationFailed) || a.ExpectUnframed() {
		t.Fatalf("wrong raw PLAIN: %v", err)
	}
}

// SaslAuthenticate v0 has no session_lifetime_ms; v1 and v2 carry it. The
// session ends after the lifetime at every version.
func TestAuthenticatorVersionsAndLifetime(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	for v := int16(0); v <= 2; v++ {
		a := newTestAuthenticator(t, 90*time.Minute, clock)
		resp, err := authenticateFramed(t, a, scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism(), v)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if resp.GetVersion() != v {
			t.Fatalf("response version %d, want %d", resp.GetVersion(), v)
		}
		wantMs, wantExpiry := int64(0), clock.t.Add(90*time.Minute)
		if v >= 1 {
			wantMs = (90 * time.Minute).Milliseconds()
		}
		if resp.SessionLifetimeMillis != wantMs || !a.SessionExpiry().Equal(wantExpiry) {
			t.Fatalf("v%d: lifetime %d ms, expiry %v; want %d, %v", v, resp.SessionLifetimeMillis, a.SessionExpiry(), wantMs, wantExpiry)
		}
	}
	// The encoding differs by version as the protocol says.
	r0 := (&kmsg.SASLAuthenticateResponse{Version: 0, SessionLifetimeMillis: 5}).AppendTo(nil)
	r1 := (&kmsg.SASLAuthenticateResponse{Version: 1, SessionLifetimeMillis: 5}).AppendTo(nil)
	if len(r1) != len(r0)+8 {
		t.Fatalf("v1 response is %d bytes, v0 %d: want 8 more for session_lifetime_ms", len(r1), len(r0))
	}
}

// KIP-368: with a lifetime, an authenticated client may handshake again,
// with the same mechanism and as the same user.
func TestAuthenticatorReauthentication(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	a := newTestAuthenticator(t, time.Minute, clock)
	if _, err := authenticateFramed(t, a, scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism(), 2); err != nil {
		t.Fatal(err)
	}
	first := a.SessionExpiry()
	clock.t = clock.t.Add(50 * time.Second)
	resp, err := authenticateFramed(t, a, scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism(), 2)
	if err != nil || resp.SessionLifetimeMillis != 60_000 {
		t.Fatalf("re-authentication: %v, lifetime %d", err, resp.SessionLifetimeMillis)
	}
	if !a.SessionExpiry().After(first) || !a.Authenticated() {
		t.Fatalf("expiry %v not extended past %v", a.SessionExpiry(), first)
	}

	// Another user: refused, and the connection is done.
	clock.t = clock.t.Add(time.Second)
	resp, err = authenticateFramed(t, a, scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha256Mechanism(), 2)
	if !errors.Is(err, ErrAuthenticationFailed) || resp.ErrorCode != wire.ErrCodeSASLAuthenticationFailed || a.Authenticated() {
		t.Fatalf("re-authentication as bob: %d, %v", resp.ErrorCode, err)
	}

	// Another mechanism: ILLEGAL_SASL_STATE.
	a = newTestAuthenticator(t, time.Minute, clock)
	if _, err := authenticateFramed(t, a, scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism(), 1); err != nil {
		t.Fatal(err)
	}
	if hs := a.Handshake(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: ScramSHA512}); hs.ErrorCode != wire.ErrCodeIllegalSASLState {
		t.Fatalf("re-authentication with another mechanism: %d", hs.ErrorCode)
	}
	// After the end, as with Kafka, a SaslHandshake may still begin a
	// re-authentication (nothing else may be sent, see Admit).
	a = newTestAuthenticator(t, time.Minute, clock)
	if _, err := authenticateFramed(t, a, scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism(), 1); err != nil {
		t.Fatal(err)
	}
	clock.t = clock.t.Add(time.Minute)
	if _, err := authenticateFramed(t, a, scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism(), 1); err != nil {
		t.Fatalf("re-authentication after expiry: %v", err)
	}
	if err := a.Admit(wire.MetadataKey); err != nil || !a.SessionExpiry().Equal(clock.t.Add(time.Minute)) {
		t.Fatalf("after a late re-authentication: %v, expiry %v", err, a.SessionExpiry())
	}
	// As in Kafka, re-authentications begin at least a second apart, so
	// that one connection cannot make kproxy hash passwords in a loop.
	a = newTestAuthenticator(t, time.Minute, clock)
	if _, err := authenticateFramed(t, a, alice256(), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := authenticateFramed(t, a, alice256(), 1); err != nil {
		t.Fatalf("first re-authentication right after login: %v", err)
	}
	clock.t = clock.t.Add(999 * time.Millisecond)
	if hs := a.Handshake(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: ScramSHA256}); hs.ErrorCode != wire.ErrCodeIllegalSASLState {
		t.Fatalf("second re-authentication within a second: %d", hs.ErrorCode)
	}
	a = newTestAuthenticator(t, time.Minute, clock)
	authenticateFramed(t, a, alice256(), 1)
	authenticateFramed(t, a, alice256(), 1)
	clock.t = clock.t.Add(time.Second)
	if _, err := authenticateFramed(t, a, alice256(), 1); err != nil {
		t.Fatalf("second re-authentication a second later: %v", err)
	}
	// Without a lifetime there is nothing to re-authenticate.
	a = newTestAuthenticator(t, 0, clock)
	if _, err := authenticateFramed(t, a, scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism(), 2); err != nil {
		t.Fatal(err)
	}
	if hs := a.Handshake(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: ScramSHA256}); hs.ErrorCode != wire.ErrCodeIllegalSASLState {
		t.Fatalf("re-handshake without a lifetime: %d", hs.ErrorCode)
	}
}

// KIP-368 for every client version: the lifetime applies whether the client
// authenticated with raw tokens after a v0 handshake, with SaslAuthenticate
// v0, or re-authenticated with v0 after a v1 login; after the end only a
// re-authentication may be sent (not even ApiVersions); a re-authentication
// begun before the end may finish after it; during one nothing else may be
// sent.
func TestAuthenticatorLifetimeEveryVersion(t *testing.T) {
	const lifetime = time.Minute
	alice := scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism()
	expired := func(t *testing.T, a *Authenticator, clock *fakeClock, end time.Time) {
		t.Helper()
		clock.t = end.Add(-time.Millisecond)
		for _, key := range []int16{wire.MetadataKey, wire.APIVersionsKey, wire.ProduceKey} {
			if err := a.Admit(key); err != nil {
				t.Fatalf("%s before the end: %v", protocol.APIName(key), err)
			}
		}
		clock.t = end
		for _, key := range []int16{wire.MetadataKey, wire.APIVersionsKey, wire.ProduceKey} {
			if err := a.Admit(key); !errors.Is(err, ErrSessionExpired) {
				t.Fatalf("%s at the end: %v, want ErrSessionExpired", protocol.APIName(key), err)
			}
		}
	}

	t.Run("v0 handshake, raw tokens", func(t *testing.T) {
		clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
		a := newTestAuthenticator(t, lifetime, clock)
		a.Handshake(&kmsg.SASLHandshakeRequest{Version: 0, Mechanism: Plain})
		if _, done, err := a.Unframed([]byte("\x00alice\x00alice-secret")); !done || err != nil {
			t.Fatalf("raw PLAIN: %v %v", done, err)
		}
		expired(t, a, clock, clock.t.Add(lifetime))
	})
	t.Run("SaslAuthenticate v0", func(t *testing.T) {
		clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
		a := newTestAuthenticator(t, lifetime, clock)
		if _, err := authenticateFramed(t, a, alice, 0); err != nil {
			t.Fatal(err)
		}
		expired(t, a, clock, clock.t.Add(lifetime))
	})
	t.Run("v1 login, v0 re-authentication", func(t *testing.T) {
		clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
		a := newTestAuthenticator(t, lifetime, clock)
		if resp, err := authenticateFramed(t, a, alice, 1); err != nil || resp.SessionLifetimeMillis != lifetime.Milliseconds() {
			t.Fatalf("v1 login: %v", err)
		}
		clock.t = clock.t.Add(50 * time.Second)
		if _, err := authenticateFramed(t, a, alice, 0); err != nil {
			t.Fatalf("v0 re-authentication: %v", err)
		}
		expired(t, a, clock, clock.t.Add(lifetime))
	})
	t.Run("re-authentication across the end", func(t *testing.T) {
		clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
		a := newTestAuthenticator(t, lifetime, clock)
		if _, err := authenticateFramed(t, a, alice, 2); err != nil {
			t.Fatal(err)
		}
		end := clock.t.Add(lifetime)
		clock.t = end.Add(-time.Second)
		if hs := a.Handshake(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: ScramSHA256}); hs.ErrorCode != 0 {
			t.Fatalf("re-handshake: %d", hs.ErrorCode)
		}
		if err := a.Admit(wire.MetadataKey); !errors.Is(err, ErrIllegalState) {
			t.Fatalf("Metadata during re-authentication: %v, want ErrIllegalState", err)
		}
		clock.t = end.Add(time.Second)
		cs, first, err := alice.Authenticate(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		resp, done, err := a.Authenticate(&kmsg.SASLAuthenticateRequest{Version: 2, SASLAuthBytes: first})
		if err != nil || done {
			t.Fatalf("client-first after the end: %v", err)
		}
		_, final, err := cs.Challenge(resp.SASLAuthBytes)
		if err != nil {
			t.Fatal(err)
		}
		if _, done, err = a.Authenticate(&kmsg.SASLAuthenticateRequest{Version: 2, SASLAuthBytes: final}); err != nil || !done {
			t.Fatalf("client-final after the end: %v %v", done, err)
		}
		expired(t, a, clock, clock.t.Add(lifetime))
	})
	t.Run("no lifetime", func(t *testing.T) {
		clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
		a := newTestAuthenticator(t, 0, clock)
		if err := a.Admit(wire.APIVersionsKey); err != nil {
			t.Fatalf("ApiVersions before authentication: %v", err)
		}
		if err := a.Admit(wire.MetadataKey); !errors.Is(err, ErrIllegalState) {
			t.Fatalf("Metadata before authentication: %v", err)
		}
		if _, err := authenticateFramed(t, a, alice, 0); err != nil {
			t.Fatal(err)
		}
		clock.t = clock.t.Add(1000 * time.Hour)
		if err := a.Admit(wire.MetadataKey); err != nil || !a.SessionExpiry().IsZero() {
			t.Fatalf("without a lifetime: %v, expiry %v", err, a.SessionExpiry())
		}
	})
}

func TestNewAuthenticatorErrors(t *testing.T) {
	store := testStore(t)
	for name, opts := range map[string]Options{
		"no store":      {Mechanisms: []string{Plain}},
		"no mechanisms": {Store: store},
		"unknown":       {Store: store, Mechanisms: []string{"GSSAPI"}},
		"negative":      {Store: store, Mechanisms: []string{Plain}, SessionLifetime: -time.Second},
	} {
		if _, err := NewAuthenticator(opts); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func alice256() sasl.Mechanism {
	return scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism()
}
