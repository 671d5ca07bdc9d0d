package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/kproxy/kproxy/internal/periodic"
	"github.com/kproxy/kproxy/internal/tlsconfig"
)

// Limits of a JWKS document: far above any identity provider's (they
// publish a handful of keys), low enough that a broken or hostile endpoint
// cannot make kproxy hold much.
const (
	maxJWKSBytes = 1 << 20
	maxJWKSKeys  = 256
)

// JWKSOptions configure a KeySet. Exactly one of URL and File is set.
type JWKSOptions struct {
	URL  string
	File string
	// Timeout bounds one fetch (connect, headers and body).
	Timeout time.Duration
	// RefreshInterval is the schedule of Run's refreshes.
	RefreshInterval time.Duration
	// MinRefreshInterval rate-limits the refreshes an unknown kid
	// triggers: at most one begins per interval, whatever clients send
	// (start-up and scheduled refreshes do not count).
	MinRefreshInterval time.Duration
	// Client fetches URL; nil means a client whose timeout is Timeout,
	// using the HTTPS_PROXY/NO_PROXY environment like other Go tools, that
	// follows redirects only within jwks_url's host or to
	// AllowedRedirectHosts, and never from https to http
	// (jwksRedirectPolicy).
	Client *http.Client
	// CAFile is a PEM bundle of the CAs trusted for URL instead of the
	// system roots (an identity provider behind a private CA); empty: the
	// system roots. Only for the default client (Client nil).
	CAFile string
	// AllowedRedirectHosts are the hosts (host, or host:port) other than
	// URL's that the default client follows a redirect to.
	AllowedRedirectHosts []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// OnFetch, when set, is told the outcome of every fetch: the keys now
	// held and the fetch's error (nil on success). It must not block.
	OnFetch func(keys int, err error)
}

// KeySet is a cached JSON Web Key Set from a URL or a file: the JWTKeys of
// OAUTHBEARER termination. The keys last fetched stay in use until a
// fetch succeeds: an endpoint that is down or returns junk costs each
// login at most Timeout (only when its kid is unknown and a refresh is
// due) and leaves the cache as it was. It is safe for concurrent use.
type KeySet struct {
	opts JWKSOptions

	mu        sync.Mutex
	keys      map[string][]jose.JSONWebKey // by kid
	fetchedAt time.Time                    // of the last successful fetch
	// lastOnDemand is when an unknown kid last began a refresh: those are
	// rate-limited, the schedule's are not.
	lastOnDemand time.Time
	lastErr      error         // of the last fetch, nil when it succeeded
	inflight     chan struct{} // closed when the fetch under way ends; nil when none
}

// NewKeySet checks opts; it does not fetch (see Refresh).
func NewKeySet(opts JWKSOptions) (*KeySet, error) {
	if (opts.URL == "") == (opts.File == "") {
		return nil, errors.New("JWKS: set exactly one of a URL and a file")
	}
	if opts.Timeout <= 0 {
		return nil, fmt.Errorf("JWKS: timeout %s must be positive", opts.Timeout)
	}
	if opts.CAFile != "" && (opts.URL == "" || opts.Client != nil) {
		return nil, errors.New("JWKS: a CA file is only for a URL fetched with the default client")
	}
	if opts.Client == nil {
		tr := &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			ResponseHeaderTimeout: opts.Timeout,
			TLSHandshakeTimeout:   opts.Timeout,
			MaxIdleConns:          2,
			IdleConnTimeout:       time.Minute,
			// Setting TLSClientConfig would otherwise turn HTTP/2 off.
			ForceAttemptHTTP2: true,
		}
		if opts.CAFile != "" {
			tc, err := tlsconfig.ClientConfig(opts.CAFile, "", "", "", false)
			if err != nil {
				return nil, fmt.Errorf("JWKS %s: %w", opts.URL, err)
			}
			tr.TLSClientConfig = tc
		}
		opts.Client = &http.Client{Timeout: opts.Timeout, Transport: tr, CheckRedirect: jwksRedirectPolicy(opts.AllowedRedirectHosts)}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &KeySet{opts: opts, keys: map[string][]jose.JSONWebKey{}}, nil
}

// Source names where the keys come from, for logs.
func (s *KeySet) Source() string {
	if s.opts.URL != "" {
		return s.opts.URL
	}
	return s.opts.File
}

// Key returns the keys published under kid. When there is none it waits
// for the refresh under way, if any, or begins one unless an unknown kid
// began one less than MinRefreshInterval ago; within ctx and Timeout.
func (s *KeySet) Key(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	if keys := s.lookup(kid); len(keys) > 0 {
		return keys, nil
	}
	s.mu.Lock()
	now := s.opts.Now()
	due := s.inflight != nil || s.lastOnDemand.IsZero() || now.Sub(s.lastOnDemand) >= s.opts.MinRefreshInterval
	if due && s.inflight == nil {
		s.lastOnDemand = now
	}
	s.mu.Unlock()
	if !due {
		return nil, fmt.Errorf("%w (an unknown kid refreshed %s less than %s ago)", ErrUnknownKeyID, s.Source(), s.opts.MinRefreshInterval)
	}
	if err := s.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("%w: refreshing the keys failed: %w", ErrUnknownKeyID, err)
	}
	if keys := s.lookup(kid); len(keys) > 0 {
		return keys, nil
	}
	return nil, fmt.Errorf("%w, also after refreshing %s", ErrUnknownKeyID, s.Source())
}

func (s *KeySet) lookup(kid string) []jose.JSONWebKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[kid]
}

// Refresh fetches the key set now, or waits for the fetch under way, and
// returns its error. Only a successful fetch replaces the keys.
func (s *KeySet) Refresh(ctx context.Context) error {
	s.mu.Lock()
	wait := s.inflight
	if wait == nil {
		s.inflight = make(chan struct{})
		go s.fetchAndStore(s.inflight)
		wait = s.inflight
	}
	s.mu.Unlock()
	select {
	case <-wait:
	case <-ctx.Done():
		return fmt.Errorf("waiting for %s: %w", s.Source(), ctx.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// fetchAndStore runs one fetch, bounded by Timeout whoever waits for it,
// and closes done.
func (s *KeySet) fetchAndStore(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.Timeout)
	defer cancel()
	keys, err := s.fetch(ctx)
	s.mu.Lock()
	s.lastErr = err
	if err == nil {
		s.keys, s.fetchedAt = keys, s.opts.Now()
	}
	s.inflight = nil
	close(done)
	s.mu.Unlock()
	if s.opts.OnFetch != nil {
		n, _, _ := s.Status()
		s.opts.OnFetch(n, err)
	}
}

// Run refreshes the keys every RefreshInterval until ctx ends (OnFetch
// hears how each went).
func (s *KeySet) Run(ctx context.Context) {
	if s.opts.RefreshInterval <= 0 {
		return
	}
	periodic.Every(ctx, s.opts.RefreshInterval, func() {
		_ = s.Refresh(ctx) // reported through OnFetch
	})
}

// Status is the number of keys held, when they were fetched and the last
// fetch's error.
func (s *KeySet) Status() (keys int, fetchedAt time.Time, lastErr error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.keys {
		keys += len(k)
	}
	return keys, s.fetchedAt, s.lastErr
}

func (s *KeySet) fetch(ctx context.Context) (map[string][]jose.JSONWebKey, error) {
	var body []byte
	var err error
	if s.opts.File != "" {
		body, err = readLimited(s.opts.File)
	} else {
		body, err = s.get(ctx)
	}
	if err != nil {
		return nil, err
	}
	keys, err := parseJWKS(body)
	if err != nil {
		return nil, fmt.Errorf("JWKS from %s: %w", s.Source(), err)
	}
	return keys, nil
}

func (s *KeySet) get(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.opts.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("JWKS request for %s: %w", s.opts.URL, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.opts.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("JWKS fetch: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("JWKS fetch from %s: HTTP status %s", s.opts.URL, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("JWKS fetch from %s: reading the body: %w", s.opts.URL, err)
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("JWKS fetch from %s: body exceeds %d bytes", s.opts.URL, maxJWKSBytes)
	}
	return body, nil
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("JWKS file: %w", err)
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("JWKS file %s: %w", path, err)
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("JWKS file %s exceeds %d bytes", path, maxJWKSBytes)
	}
	return body, nil
}

// parseJWKS reads a key set (RFC 7517 section 5), keeping the public
// signature keys: keys go-jose cannot read (an unknown kty or curve) are
// skipped, as RFC 7517 section 5 asks, and so are symmetric keys (never a
// token verification key here), keys whose use is not "sig" and the
// private halves of any private key. A document with no usable key is an
// error, so that junk never replaces good keys.
func parseJWKS(body []byte) (map[string][]jose.JSONWebKey, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("not a JSON key set: %w", err)
	}
	if len(doc.Keys) > maxJWKSKeys {
		return nil, fmt.Errorf("%d keys, more than %d", len(doc.Keys), maxJWKSKeys)
	}
	out := map[string][]jose.JSONWebKey{}
	n := 0
	for _, raw := range doc.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil || !k.Valid() || (k.Use != "" && k.Use != "sig") {
			continue
		}
		if _, symmetric := k.Key.([]byte); symmetric {
			continue
		}
		if !k.IsPublic() {
			k = k.Public()
		}
		out[k.KeyID] = append(out[k.KeyID], k)
		n++
	}
	if n == 0 {
		return nil, errors.New("no usable public signature key")
	}
	return out, nil
}
