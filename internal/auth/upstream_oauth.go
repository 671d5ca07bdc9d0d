package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/kproxy/kproxy/internal/tlsconfig"
)

// A cached token is used until tokenRefreshPercent of its lifetime has
// passed or, if that is earlier, until tokenRefreshBuffer before it
// expires (but at least for half its lifetime), then a new one is fetched
// (Kafka's own login refreshes likewise: sasl.login.refresh.window.factor
// 0.8, buffer 300 s). The broker ends a session when the token it was
// opened with expires (KIP-368 caps the session lifetime at the token's),
// so a login late in a token's life buys a short session and an early
// re-authentication, and a broker refuses re-authentications less than a
// second apart. If the token endpoint fails, the cached token still serves
// while at least tokenMinRemaining of it is left.
const (
	tokenRefreshPercent = 80
	tokenRefreshBuffer  = 5 * time.Minute
	tokenMinRemaining   = time.Second
	// tokenRetryAfter is how long after a failed token request logins get
	// its error (or the still-valid cached token) without asking again:
	// every connection kproxy relays logs in, so a failing endpoint would
	// otherwise be asked once per client connection attempt.
	tokenRetryAfter = time.Second
	// DefaultTokenTimeout bounds one request to the token endpoint.
	DefaultTokenTimeout = 10 * time.Second
)

// ClientCredentials is kproxy's own OAuth client: the client-credentials
// grant (RFC 6749 section 4.4) against TokenURL.
type ClientCredentials struct {
	TokenURL     string
	ClientID     string
	ClientSecret string
	// Scopes are sent as the space-separated scope parameter; none: left out.
	Scopes []string
	// Timeout bounds one token request; 0: DefaultTokenTimeout.
	Timeout time.Duration
	// CAFile is a PEM bundle of the CAs trusted for TokenURL instead of
	// the system roots (an identity provider behind a private CA); empty:
	// the system roots.
	CAFile string
	// Observe, if set, is told of every token request, from the
	// goroutine of the login that made it.
	Observe func(TokenEvent)
}

// TokenEvent is one token request's outcome.
type TokenEvent struct {
	// Expiry is the new token's (zero if unknown or on error).
	Expiry time.Time
	Took   time.Duration
	// Err is why the request failed; nil on success.
	Err error
	// Stale reports that, after Err, the cached token still served.
	Stale bool
}

// TokenSource fetches kproxy's access token with the client-credentials
// grant and caches it for every login (the relayed connections' and
// kproxy's own clients'), so that the token endpoint sees one request per
// token lifetime, not one per connection. Safe for concurrent use.
type TokenSource struct {
	cfg     clientcredentials.Config
	http    *http.Client
	observe func(TokenEvent)
	// fetching admits one token request at a time; a login waiting for
	// it gives up when its own context ends.
	fetching chan struct{}

	mu        sync.Mutex
	token     string
	refreshAt time.Time // when a login fetches a new token
	expiry    time.Time // when the cached token stops being usable; zero: none cached
	// lastErr failed the last token request; until retryAt logins get it
	// rather than make another.
	lastErr error
	retryAt time.Time

	fetched, failed atomic.Uint64
}

var errTokenRedirect = errors.New("the token endpoint redirects; configure the URL it redirects to")

// NewTokenSource returns a token source for c; it fetches nothing until
// the first Token.
func NewTokenSource(c ClientCredentials) (*TokenSource, error) {
	if c.TokenURL == "" || c.ClientID == "" || c.ClientSecret == "" {
		return nil, errors.New("upstream OAUTHBEARER: token endpoint, client id and client secret must be non-empty")
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTokenTimeout
	}
	// nil: http.DefaultTransport, as without a CA file.
	var transport http.RoundTripper
	if c.CAFile != "" {
		tc, err := tlsconfig.ClientConfig(c.CAFile, "", "", "", false)
		if err != nil {
			return nil, fmt.Errorf("upstream OAUTHBEARER: token endpoint %s: %w", c.TokenURL, err)
		}
		base, ok := http.DefaultTransport.(*http.Transport)
		if !ok {
			return nil, errors.New("upstream OAUTHBEARER: http.DefaultTransport is not an *http.Transport")
		}
		tr := base.Clone() // the default's proxy, dial and idle settings
		tr.TLSClientConfig = tc
		transport = tr
	}
	return &TokenSource{
		cfg: clientcredentials.Config{
			ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: c.TokenURL, Scopes: c.Scopes,
			// AutoDetect: client_secret_basic, then client_secret_post
			// if the endpoint refuses it (RFC 6749 section 2.3.1).
			AuthStyle: oauth2.AuthStyleAutoDetect,
		},
		http: &http.Client{
			Timeout:   timeout,
			Transport: transport,
			// A redirect would resend the form (with the secret, for
			// client_secret_post) to wherever it points: refused.
			CheckRedirect: func(*http.Request, []*http.Request) error { return errTokenRedirect },
		},
		fetching: make(chan struct{}, 1),
		observe:  c.Observe,
	}, nil
}

// Token returns an access token: the cached one while it is fresh, else a
// new one from the token endpoint (within ctx). When the endpoint fails,
// a cached token that has not expired is returned instead of the error.
func (s *TokenSource) Token(ctx context.Context) (string, error) {
	if tok, ok := s.cached(time.Now(), false); ok {
		return tok, nil
	}
	select {
	case s.fetching <- struct{}{}:
	case <-ctx.Done():
		return "", fmt.Errorf("upstream OAUTHBEARER: waiting for the token request: %w", context.Cause(ctx))
	}
	defer func() { <-s.fetching }()
	// Another login may have fetched one while this one waited.
	if tok, ok := s.cached(time.Now(), false); ok {
		return tok, nil
	}
	if err := s.recentFailure(time.Now()); err != nil {
		if stale, ok := s.cached(time.Now(), true); ok {
			return stale, nil
		}
		return "", err
	}
	began := time.Now()
	tok, expiry, err := s.fetch(ctx)
	ev := TokenEvent{Expiry: expiry, Took: time.Since(began), Err: err}
	s.mu.Lock()
	s.lastErr, s.retryAt = err, time.Now().Add(tokenRetryAfter)
	s.mu.Unlock()
	if err != nil {
		s.failed.Add(1)
		stale, ok := s.cached(time.Now(), true)
		ev.Stale = ok
		s.notify(ev)
		if ok {
			return stale, nil
		}
		return "", err
	}
	s.fetched.Add(1)
	s.notify(ev)
	return tok, nil
}

// recentFailure is the last token request's error while logins must not
// ask again, else nil.
func (s *TokenSource) recentFailure(now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastErr != nil && now.Before(s.retryAt) {
		return s.lastErr
	}
	return nil
}

// cached returns the cached token if it is fresh or, with stale, merely
// not about to expire.
func (s *TokenSource) cached(now time.Time, stale bool) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == "" {
		return "", false
	}
	if stale {
		return s.token, now.Before(s.expiry.Add(-tokenMinRemaining))
	}
	return s.token, now.Before(s.refreshAt)
}

func (s *TokenSource) notify(ev TokenEvent) {
	if s.observe != nil {
		s.observe(ev)
	}
}

// fetch asks the token endpoint for a token and caches it; it returns the
// token and its expiry.
func (s *TokenSource) fetch(ctx context.Context) (string, time.Time, error) {
	began := time.Now()
	t, err := s.cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, s.http))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("upstream OAUTHBEARER: token request to %s: %w", s.cfg.TokenURL, s.tokenRequestError(err))
	}
	if t.AccessToken == "" {
		return "", time.Time{}, fmt.Errorf("upstream OAUTHBEARER: token endpoint %s returned no access_token", s.cfg.TokenURL)
	}
	expiry := tokenExpiry(began, t.Expiry, jwtExpiry(t.AccessToken))
	if !expiry.After(began) {
		// Caching it would make every login ask again; as a failure,
		// the next request waits tokenRetryAfter.
		return "", time.Time{}, fmt.Errorf("upstream OAUTHBEARER: token endpoint %s returned a token that expired at %s", s.cfg.TokenURL, expiry.UTC().Format(time.RFC3339))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token, s.expiry = t.AccessToken, expiry
	s.refreshAt = began.Add(refreshAfter(expiry.Sub(began)))
	return t.AccessToken, expiry, nil
}

// refreshAfter is how long a token of lifetime is used before a new one
// is fetched.
func refreshAfter(lifetime time.Duration) time.Duration {
	return max(min(lifetime*tokenRefreshPercent/100, lifetime-tokenRefreshBuffer), lifetime/2)
}

// Bounds of a token's lifetime when the token itself does not say it.
const (
	// tokenUnknownLifetime is the lifetime of a token with neither a
	// positive expires_in nor a JWT exp: reused briefly, not fetched per
	// login.
	tokenUnknownLifetime = time.Minute
	// tokenMaxOpaqueLifetime caps an expires_in that no JWT exp confirms.
	tokenMaxOpaqueLifetime = 24 * time.Hour
)

// tokenExpiry is when a token fetched at began stops being usable: the
// earlier of the endpoint's expires_in (endpointExpiry, as oauth2 computed
// it; zero or not after began means absent or non-positive, so unknown)
// and the JWT's exp (jwtExp, zero if none). An expires_in cannot extend a
// JWT's exp, nor a non-positive one shorten it to nothing; without an exp
// it is capped at tokenMaxOpaqueLifetime, and with neither the lifetime is
// tokenUnknownLifetime. The result may be before began: an expired JWT.
func tokenExpiry(began, endpointExpiry, jwtExp time.Time) time.Time {
	fromEndpoint := !endpointExpiry.IsZero() && endpointExpiry.After(began)
	switch {
	case !jwtExp.IsZero() && fromEndpoint && endpointExpiry.Before(jwtExp):
		return endpointExpiry
	case !jwtExp.IsZero():
		return jwtExp
	case fromEndpoint:
		return minTime(endpointExpiry, began.Add(tokenMaxOpaqueLifetime))
	}
	return began.Add(tokenUnknownLifetime)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// jwtExpiry reads the exp claim of a JWT access token without checking
// its signature (the broker does that): it only schedules the refresh.
// The claims are read as the validator reads them (exact names, no
// duplicates). Zero if token is not a JWT with a numeric exp after the
// epoch.
func jwtExpiry(token string) time.Time {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}
	}
	claims, err := parseJWTClaims(payload)
	if err != nil {
		return time.Time{}
	}
	exp, ok, err := claims.numericDate("exp")
	if err != nil || !ok || exp.Unix() <= 0 {
		return time.Time{}
	}
	return exp
}

// Mechanism is the OAUTHBEARER client mechanism (KIP-255) that logs in
// with this source's token: every login and re-authentication asks
// Token, so a re-authentication late in a token's life sends a new one.
func (s *TokenSource) Mechanism() sasl.Mechanism {
	return oauth.Oauth(func(ctx context.Context) (oauth.Auth, error) {
		tok, err := s.Token(ctx)
		if err != nil {
			return oauth.Auth{}, err
		}
		return oauth.Auth{Token: tok}, nil
	})
}
