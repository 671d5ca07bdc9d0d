package auth

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/idp"
)

const testClientSecret = "s3cr3t-client-value"

func startTokenIdP(t *testing.T, lifetime time.Duration) *idp.IdP {
	t.Helper()
	p, err := idp.Start(idp.Options{Audience: "kafka", TokenLifetime: lifetime,
		Clients: map[string]idp.Client{"kproxy": {Secret: testClientSecret, Subject: "svc-kproxy"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// events records what a TokenSource observed.
type events struct {
	mu  sync.Mutex
	got []TokenEvent
}

func (e *events) observe(ev TokenEvent) { e.mu.Lock(); e.got = append(e.got, ev); e.mu.Unlock() }
func (e *events) all() []TokenEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]TokenEvent(nil), e.got...)
}

func newSource(t *testing.T, c ClientCredentials) *TokenSource {
	t.Helper()
	s, err := NewTokenSource(c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func claimsOf(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// Many logins at once share one token request, and the token carries the
// configured scope and the client's subject.
func TestTokenSourceCachesOneToken(t *testing.T) {
	p := startTokenIdP(t, time.Hour)
	var ev events
	s := newSource(t, ClientCredentials{TokenURL: p.TokenURL(), ClientID: "kproxy", ClientSecret: testClientSecret,
		Scopes: []string{"kafka", "kafka.write"}, Observe: ev.observe})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tokens := make([]string, 16)
	var wg sync.WaitGroup
	for i := range tokens {
		wg.Go(func() {
			tok, err := s.Token(ctx)
			if err != nil {
				t.Error(err)
			}
			tokens[i] = tok
		})
	}
	wg.Wait()
	if n := p.TokensIssued(); n != 1 {
		t.Fatalf("the IdP issued %d tokens for 16 concurrent logins, want 1", n)
	}
	for _, tok := range tokens[1:] {
		if tok != tokens[0] {
			t.Fatal("logins got different tokens")
		}
	}
	c := claimsOf(t, tokens[0])
	if c["scope"] != "kafka kafka.write" || c["sub"] != "svc-kproxy" || c["aud"] != "kafka" {
		t.Fatalf("token claims %v", c)
	}
	if got := ev.all(); len(got) != 1 || got[0].Err != nil || time.Until(got[0].Expiry) < 59*time.Minute {
		t.Fatalf("events %+v", got)
	}
	if ok, failed := s.Stats(); ok != 1 || failed != 0 {
		t.Fatalf("stats %d/%d", ok, failed)
	}
}

func TestRefreshAfter(t *testing.T) {
	for _, tc := range []struct{ lifetime, want time.Duration }{
		{time.Hour, 48 * time.Minute},        // 80%
		{20 * time.Minute, 15 * time.Minute}, // 5 minutes before the end
		{8 * time.Minute, 4 * time.Minute},   // but at least half
		{2 * time.Second, time.Second},       // half
		{100 * time.Hour, 80 * time.Hour},    // 80%
	} {
		if got := refreshAfter(tc.lifetime); got != tc.want {
			t.Errorf("refreshAfter(%s) = %s, want %s", tc.lifetime, got, tc.want)
		}
	}
}

// After half of its 6 s lifetime a token is replaced: a login then gets a
// new one. The checks sit 2.5 s clear of the refresh and of the expiry, so
// a slow machine does not move them across either.
func TestTokenSourceRefreshesBeforeExpiry(t *testing.T) {
	p := startTokenIdP(t, 6*time.Second)
	s := newSource(t, ClientCredentials{TokenURL: p.TokenURL(), ClientID: "kproxy", ClientSecret: testClientSecret})
	ctx := context.Background()
	fetched := time.Now()
	first, err := s.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if again, _ := s.Token(ctx); again != first || p.TokensIssued() != 1 {
		t.Fatalf("a token at a twelfth of its lifetime was not reused (issued %d)", p.TokensIssued())
	}
	time.Sleep(time.Until(fetched.Add(3500 * time.Millisecond))) // past half of 6 s, before expiry
	second, err := s.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if second == first || p.TokensIssued() != 2 {
		t.Fatalf("no new token at 58%% of the first one's lifetime (issued %d)", p.TokensIssued())
	}
}

// A wrong secret fails with the endpoint's error code, and no error or
// event shows the secret.
func TestTokenSourceWrongSecret(t *testing.T) {
	p := startTokenIdP(t, time.Hour)
	var ev events
	s := newSource(t, ClientCredentials{TokenURL: p.TokenURL(), ClientID: "kproxy", ClientSecret: "not-" + testClientSecret, Observe: ev.observe})
	_, err := s.Token(context.Background())
	if err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("wrong secret: %v, want invalid_client", err)
	}
	if strings.Contains(err.Error(), testClientSecret) {
		t.Fatalf("error shows the secret: %v", err)
	}
	if got := ev.all(); len(got) != 1 || got[0].Err == nil || got[0].Stale {
		t.Fatalf("events %+v", got)
	}
	if ok, failed := s.Stats(); ok != 0 || failed != 1 {
		t.Fatalf("stats %d/%d", ok, failed)
	}
	// Logins right after a failure get its error without a new request;
	// a second later they ask again.
	for range 5 {
		if _, again := s.Token(context.Background()); again == nil || again.Error() != err.Error() {
			t.Fatalf("login after the failure: %v, want %v", again, err)
		}
	}
	if _, failed := s.Stats(); failed != 1 {
		t.Fatalf("%d token requests within %s of a failure, want none", failed-1, tokenRetryAfter)
	}
	time.Sleep(tokenRetryAfter + 100*time.Millisecond)
	if _, err := s.Token(context.Background()); err == nil {
		t.Fatal("wrong secret accepted")
	}
	if _, failed := s.Stats(); failed != 2 {
		t.Fatalf("%d token requests after the retry delay, want 2", failed)
	}
}

// When the endpoint is down and the cached token is about to expire,
// logins fail rather than send a token the broker would refuse.
func TestTokenSourceEndpointDownTokenExpiring(t *testing.T) {
	p := startTokenIdP(t, time.Hour)
	s := newSource(t, ClientCredentials{TokenURL: p.TokenURL(), ClientID: "kproxy", ClientSecret: testClientSecret, Timeout: time.Second})
	if _, err := s.Token(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.Close()
	s.mu.Lock()
	s.refreshAt, s.expiry = time.Now(), time.Now().Add(tokenMinRemaining/2)
	s.mu.Unlock()
	if _, err := s.Token(context.Background()); err == nil || !strings.Contains(err.Error(), "token request to "+p.TokenURL()) {
		t.Fatalf("outage with an expiring token: %v", err)
	}
}

// The cached token serves through an outage while it has time left.
func TestTokenSourceStaleWhileValid(t *testing.T) {
	p := startTokenIdP(t, 10*time.Second)
	var ev events
	s := newSource(t, ClientCredentials{TokenURL: p.TokenURL(), ClientID: "kproxy", ClientSecret: testClientSecret, Timeout: time.Second, Observe: ev.observe})
	first, err := s.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	s.mu.Lock()
	s.refreshAt = time.Now() // due for refresh, 10 s from expiry
	s.mu.Unlock()
	tok, err := s.Token(context.Background())
	if err != nil || tok != first {
		t.Fatalf("outage with a valid cached token: %v (same token %v)", err, tok == first)
	}
	if got := ev.all(); len(got) != 2 || got[1].Err == nil || !got[1].Stale {
		t.Fatalf("events %+v", got)
	}
}

// A login waiting for another's slow token request gives up with its own
// context.
func TestTokenSourceWaitHonoursContext(t *testing.T) {
	p := startTokenIdP(t, time.Hour)
	s := newSource(t, ClientCredentials{TokenURL: p.TokenURL(), ClientID: "kproxy", ClientSecret: testClientSecret})
	s.fetching <- struct{}{} // a request in progress
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.Token(ctx); err == nil || !strings.Contains(err.Error(), "waiting for the token request") {
		t.Fatalf("got %v", err)
	}
	<-s.fetching
}

func TestJWTExpiry(t *testing.T) {
	p := startTokenIdP(t, time.Hour)
	exp := time.Now().Add(90 * time.Second).Truncate(time.Second)
	if got := jwtExpiry(p.Mint(map[string]any{"exp": exp.Unix()})); !got.Equal(exp) {
		t.Fatalf("exp %v, want %v", got, exp)
	}
	for _, bad := range []string{"", "a.b", "a.!!.c", "a." + base64.RawURLEncoding.EncodeToString([]byte(`{"exp":"soon"}`)) + ".c"} {
		if got := jwtExpiry(bad); !got.IsZero() {
			t.Fatalf("%q: %v", bad, got)
		}
	}
}

// A token endpoint that redirects is not followed: the form, which may
// carry the secret, is not sent on.
func TestTokenSourceRefusesRedirects(t *testing.T) {
	p := startTokenIdP(t, time.Hour)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, p.TokenURL(), http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	s := newSource(t, ClientCredentials{TokenURL: redirect.URL + "/token", ClientID: "kproxy", ClientSecret: testClientSecret})
	if _, err := s.Token(context.Background()); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("redirecting endpoint: %v", err)
	}
	if n := p.TokensIssued(); n != 0 {
		t.Fatalf("the redirect was followed: %d tokens issued", n)
	}
}

// TestTokenSourceCAFile: a token endpoint served over HTTPS behind a
// private CA gives a token when CAFile names that CA; with the system
// roots the request fails on the certificate and never reaches the
// endpoint. The error names the endpoint, not the secret.
func TestTokenSourceCAFile(t *testing.T) {
	pki := certs.New(t)
	p, err := idp.Start(idp.Options{Audience: "kafka",
		Clients: map[string]idp.Client{"kproxy": {Secret: testClientSecret, Subject: "svc-kproxy"}}, TLSCA: pki.CA})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ctx := context.Background()

	s := newSource(t, ClientCredentials{TokenURL: p.TokenURL(), ClientID: "kproxy", ClientSecret: testClientSecret, CAFile: pki.CAFile})
	tok, err := s.Token(ctx)
	if err != nil {
		t.Fatalf("token from %s trusting the test CA: %v", p.TokenURL(), err)
	}
	if c := claimsOf(t, tok); c["sub"] != "svc-kproxy" {
		t.Fatalf("claims %v", c)
	}

	roots := newSource(t, ClientCredentials{TokenURL: p.TokenURL(), ClientID: "kproxy", ClientSecret: testClientSecret})
	_, err = roots.Token(ctx)
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) || !strings.Contains(err.Error(), p.TokenURL()) || strings.Contains(err.Error(), testClientSecret) {
		t.Fatalf("token with the system roots: %v, want x509.UnknownAuthorityError naming the endpoint", err)
	}
	if n := p.TokensIssued(); n != 1 {
		t.Fatalf("the endpoint issued %d tokens, want 1", n)
	}
	if _, err := NewTokenSource(ClientCredentials{TokenURL: p.TokenURL(), ClientID: "kproxy", ClientSecret: testClientSecret,
		CAFile: filepath.Join(t.TempDir(), "none.pem")}); err == nil {
		t.Fatal("a missing CA file accepted")
	}
}
