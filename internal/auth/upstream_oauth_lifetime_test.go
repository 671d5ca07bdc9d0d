package auth

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestTokenExpiry(t *testing.T) {
	began := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	in := func(d time.Duration) time.Time { return began.Add(d) }
	var none time.Time
	for _, c := range []struct {
		name             string
		endpoint, jwtExp time.Time
		want             time.Time
	}{
		{"expires_in earlier", in(time.Minute), in(time.Hour), in(time.Minute)},
		{"exp earlier than a huge expires_in", in(math.MaxInt32 * time.Second), in(time.Hour), in(time.Hour)},
		{"negative expires_in, exp", in(-time.Second), in(time.Hour), in(time.Hour)},
		{"no expires_in, exp", none, in(time.Hour), in(time.Hour)},
		{"expired exp", in(time.Hour), in(-time.Minute), in(-time.Minute)},
		{"opaque, expires_in", in(time.Hour), none, in(time.Hour)},
		{"opaque, huge expires_in", in(math.MaxInt32 * time.Second), none, in(tokenMaxOpaqueLifetime)},
		{"opaque, negative expires_in", in(-time.Hour), none, in(tokenUnknownLifetime)},
		{"opaque, no expires_in", none, none, in(tokenUnknownLifetime)},
	} {
		if got := tokenExpiry(began, c.endpoint, c.jwtExp); !got.Equal(c.want) {
			t.Errorf("%s: %s, want %s", c.name, got.Sub(began), c.want.Sub(began))
		}
	}
}

// TestTokenSourceLifetimeIsTheEarlierOfExpiresInAndExp: a token endpoint
// whose expires_in contradicts its JWT's exp cannot make kproxy keep a
// token past its exp (a huge expires_in) nor ask for a token at every login
// (a negative or zero one): the provider sees one request for many logins.
func TestTokenSourceLifetimeIsTheEarlierOfExpiresInAndExp(t *testing.T) {
	for _, expiresIn := range []int64{math.MaxInt64, math.MaxInt32, 0, -1, -3600} {
		t.Run(fmt.Sprint(expiresIn), func(t *testing.T) {
			p := startTokenIdP(t, 10*time.Minute)
			p.SetExpiresIn(expiresIn)
			s := newSource(t, ClientCredentials{TokenURL: p.TokenURL(), ClientID: "kproxy", ClientSecret: testClientSecret})
			var tok string
			for range 20 {
				var err error
				if tok, err = s.Token(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if exp := jwtExpiry(tok); !s.Expiry().Equal(exp) {
				t.Errorf("token kept until %s, its exp is %s", s.Expiry().UTC(), exp.UTC())
			}
			if n := p.TokenRequests(); n != 1 {
				t.Errorf("%d token requests for 20 logins, want 1", n)
			}
		})
	}
}

// opaqueTokenEndpoint answers every request with body and counts them.
func opaqueTokenEndpoint(t *testing.T, status int, contentType, body string) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestTokenSourceOpaqueOrExpiredToken: an opaque token with a
// negative expires_in is reused for tokenUnknownLifetime, not fetched per
// login; a JWT that has already expired is a failed request, retried
// after tokenRetryAfter, not at every login.
func TestTokenSourceOpaqueOrExpiredToken(t *testing.T) {
	opaque, opaqueRequests := opaqueTokenEndpoint(t, http.StatusOK, "application/json",
		`{"access_token":"opaque-token","token_type":"Bearer","expires_in":-5}`)
	expiredJWT := "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(
		fmt.Appendf(nil, `{"exp":%d}`, time.Now().Add(-time.Minute).Unix())) + ".c2ln"
	expired, expiredRequests := opaqueTokenEndpoint(t, http.StatusOK, "application/json",
		fmt.Sprintf(`{"access_token":%q,"token_type":"Bearer","expires_in":3600}`, expiredJWT))

	s := newSource(t, ClientCredentials{TokenURL: opaque.URL, ClientID: "kproxy", ClientSecret: testClientSecret})
	for range 20 {
		if tok, err := s.Token(context.Background()); err != nil || tok != "opaque-token" {
			t.Fatalf("token %q: %v", tok, err)
		}
	}
	if n := opaqueRequests.Load(); n != 1 {
		t.Errorf("%d token requests for 20 logins with an opaque token, want 1", n)
	}
	if until := s.Expiry(); until.After(time.Now().Add(tokenUnknownLifetime)) {
		t.Errorf("opaque token kept until %s, want at most %s from now", until, tokenUnknownLifetime)
	}

	s = newSource(t, ClientCredentials{TokenURL: expired.URL, ClientID: "kproxy", ClientSecret: testClientSecret})
	began := time.Now()
	for range 20 {
		if _, err := s.Token(context.Background()); err == nil || !strings.Contains(err.Error(), "returned a token that expired at") {
			t.Fatalf("an expired token: %v", err)
		}
	}
	// One request per tokenRetryAfter however slow the loop ran, not one
	// per login.
	if n, most := expiredRequests.Load(), 1+int64(time.Since(began)/tokenRetryAfter); n > most {
		t.Errorf("%d token requests for 20 logins over %s given an expired token, want at most %d (one per %s)", n, time.Since(began), most, tokenRetryAfter)
	}
}

// TestTokenSourceErrorHoldsNoBody: a failed token request's error is the
// HTTP status and the endpoint's error and error_description, never the
// response body: an endpoint that echoes the request would put the client
// secret in kproxy's log. A description that repeats the secret has it
// redacted, and control characters (forged log lines) are dropped.
func TestTokenSourceErrorHoldsNoBody(t *testing.T) {
	long := strings.Repeat("x", 1000)
	for _, c := range []struct {
		name, contentType, body string
		want                    []string
	}{
		{"text echo", "text/plain", "cannot parse: grant_type=client_credentials&client_secret=" + testClientSecret, []string{"HTTP status 400"}},
		{"json echo without error", "application/json", fmt.Sprintf(`{"request":"client_secret=%s"}`, testClientSecret), []string{"HTTP status 400"}},
		{"description echoes", "application/json", fmt.Sprintf(`{"error":"invalid_request","error_description":"bad client_secret=%s\n{\"level\":\"error\"} %s"}`, testClientSecret, long),
			[]string{"HTTP status 400", `error "invalid_request"`, "client_secret=[redacted]", "...", `{\"level\":\"error\"}`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := opaqueTokenEndpoint(t, http.StatusBadRequest, c.contentType, c.body)
			s := newSource(t, ClientCredentials{TokenURL: srv.URL, ClientID: "kproxy", ClientSecret: testClientSecret})
			_, err := s.Token(context.Background())
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if strings.Contains(msg, testClientSecret) || strings.Contains(msg, "client_credentials") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("the error holds the body, the secret or a line break: %q", msg)
			}
			if len(msg) > 2*maxTokenErrorText+200 {
				t.Fatalf("the error is %d bytes long", len(msg))
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
}

// TestJWTExpiryReadsExactNames: the upstream token's exp is read as the
// validator reads it: "EXP" is not exp, and a duplicate exp is no exp.
func TestJWTExpiryReadsExactNames(t *testing.T) {
	token := func(payload string) string {
		return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(payload)) + ".c2ln"
	}
	for payload, want := range map[string]time.Time{
		`{"EXP":1800000000}`:                   {},
		`{"exp":1000,"Exp":1800000000}`:        time.Unix(1000, 0),
		`{"exp":1800000000,"exp":1900000000}`:  {},
		`{"exp":1800000000,"x":{"a":1,"a":2}}`: {},
		`{"exp":1800000000.5}`:                 time.Unix(1800000000, 5e8),
	} {
		if got := jwtExpiry(token(payload)); !got.Equal(want) {
			t.Errorf("%s: exp %v, want %v", payload, got, want)
		}
	}
}
