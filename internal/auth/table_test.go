package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/kproxy/kproxy/internal/wire"
	kproxysasl "github.com/kproxy/kproxy/sasl"
)

// tokenSession is a program's mechanism: the client's message is
// "user:token", the token valid for user until expires.
type tokenSession struct {
	expires time.Time
	user    string
}

func (s *tokenSession) Step(msg []byte) ([]byte, bool, error) {
	user, token, _ := strings.Cut(string(msg), ":")
	if token != "t0ken" {
		return nil, false, errors.New("wrong token")
	}
	s.user = user
	return nil, true, nil
}

func (s *tokenSession) User() string      { return s.user }
func (s *tokenSession) Expiry() time.Time { return s.expires }

// tokenLogin is its client side.
type tokenLogin string

func (tokenLogin) Name() string { return "X-TOKEN" }
func (l tokenLogin) Authenticate(context.Context, string) (sasl.Session, []byte, error) {
	return tokenLoginSession{}, []byte(l), nil
}

type tokenLoginSession struct{}

func (tokenLoginSession) Challenge([]byte) (bool, []byte, error) { return true, nil, nil }

func tokenAuthenticator(t *testing.T, clock *fakeClock, lifetime time.Duration, expires time.Time) *Authenticator {
	t.Helper()
	table, err := NewMechanisms(kproxysasl.Mechanism{Name: "X-TOKEN", NewSession: func() kproxysasl.Session { return &tokenSession{expires: expires} }})
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAuthenticator(Options{Mechanisms: []string{"X-TOKEN", ScramSHA512}, Table: table, Store: testStore(t), SessionLifetime: lifetime, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestProgramMechanismSession: a program's mechanism runs as the built-in
// ones do: its user is the connection's, the session lifetime applies and
// a credential's expiry shortens it, a re-authentication must keep the
// user, and a refused message is SASL_AUTHENTICATION_FAILED naming the
// mechanism only (the reason is for the log).
func TestProgramMechanismSession(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	a := tokenAuthenticator(t, clock, time.Minute, time.Time{})
	resp, err := authenticateFramed(t, a, tokenLogin("svc:t0ken"), 2)
	if err != nil || a.User() != "svc" || a.Mechanism() != "X-TOKEN" || resp.SessionLifetimeMillis != 60_000 {
		t.Fatalf("login: %v, user %q, mechanism %q, lifetime %d", err, a.User(), a.Mechanism(), resp.SessionLifetimeMillis)
	}
	clock.t = clock.t.Add(30 * time.Second)
	if _, err := authenticateFramed(t, a, tokenLogin("svc:t0ken"), 2); err != nil || !a.SessionExpiry().Equal(clock.t.Add(time.Minute)) {
		t.Fatalf("re-authentication: %v, expiry %v", err, a.SessionExpiry())
	}
	clock.t = clock.t.Add(time.Second)
	if _, err := authenticateFramed(t, a, tokenLogin("other:t0ken"), 2); !errors.Is(err, ErrAuthenticationFailed) || a.Authenticated() {
		t.Fatalf("re-authentication as another user: %v, authenticated %v", err, a.Authenticated())
	}

	expires := clock.t.Add(10 * time.Second)
	a = tokenAuthenticator(t, clock, time.Minute, expires)
	if resp, err := authenticateFramed(t, a, tokenLogin("svc:t0ken"), 2); err != nil || resp.SessionLifetimeMillis != 10_000 || !a.SessionExpiry().Equal(expires) {
		t.Fatalf("login with a credential expiring in 10s: %v, lifetime %d", err, resp.SessionLifetimeMillis)
	}

	a = tokenAuthenticator(t, clock, 0, time.Time{})
	resp, err = authenticateFramed(t, a, tokenLogin("svc:guessed"), 2)
	if !errors.Is(err, ErrAuthenticationFailed) || resp.ErrorCode != wire.ErrCodeSASLAuthenticationFailed ||
		resp.ErrorMessage == nil || strings.Contains(*resp.ErrorMessage, "wrong token") || !strings.Contains(err.Error(), "X-TOKEN authentication failed: wrong token") {
		t.Fatalf("wrong token: %v, code %d, message %v", err, resp.ErrorCode, resp.ErrorMessage)
	}
	if hs := a.Handshake(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: "X-TOKEN"}); hs.ErrorCode != wire.ErrCodeIllegalSASLState {
		t.Fatalf("handshake after a failure: %d", hs.ErrorCode)
	}
}

// TestMechanismTable: a program's mechanism needs a table holding it, and
// cannot take a built-in name.
func TestMechanismTable(t *testing.T) {
	token := kproxysasl.Mechanism{Name: "X-TOKEN", NewSession: func() kproxysasl.Session { return &tokenSession{} }}
	if _, err := NewAuthenticator(Options{Mechanisms: []string{"X-TOKEN"}}); !errors.Is(err, ErrUnsupportedMechanism) {
		t.Errorf("X-TOKEN with the built-in table: %v", err)
	}
	if _, err := NewMechanisms(token, token); err == nil {
		t.Error("X-TOKEN added twice: accepted")
	}
	plain := token
	plain.Name = Plain
	if _, err := NewMechanisms(plain); err == nil {
		t.Error("a program's PLAIN: accepted")
	}
	table, err := NewMechanisms(token)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := OrList(table.ServerNames()), "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or X-TOKEN"; got != want {
		t.Errorf("server names %q, want %q", got, want)
	}
	if got, want := OrList(table.UpstreamNames()), "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER"; got != want {
		t.Errorf("upstream names %q, want %q", got, want)
	}
}
