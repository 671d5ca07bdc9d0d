// Package idp is a small but real OpenID Connect provider for tests: it
// serves discovery, a JWKS and a client-credentials token endpoint over HTTP
// (or HTTPS, with Options.TLSCA) on loopback, and signs RS256 JWTs with a
// key id. Keys can be rotated (the previous key stays published until
// RetireOld), and Mint issues arbitrary, deliberately broken tokens for
// rejection tests.
//
// Tokens are signed with github.com/go-jose/go-jose/v4, the library kproxy's
// own OAUTHBEARER validation uses.
package idp

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/kproxy/kproxy/internal/testpki"
)

// Options configures a provider. Zero values take the documented defaults.
type Options struct {
	// Addr is the listen address; default 127.0.0.1:0 (an OS-chosen port).
	Addr string
	// Issuer is the iss claim and the discovery document's issuer; default
	// the provider's own URL (http://host:port, no trailing slash).
	Issuer string
	// Audience is the aud claim of issued tokens; empty: no aud claim.
	Audience string
	// TokenLifetime is how long issued tokens are valid; default 1h.
	TokenLifetime time.Duration
	// Clients are the registered clients by client id.
	Clients map[string]Client
	// TLSCA, when set, makes the provider serve HTTPS with a certificate
	// for 127.0.0.1, ::1 and localhost (testpki.ServerLeaf) issued by this
	// CA, as a provider behind a private CA does; nil: plain HTTP.
	TLSCA *testpki.CA
}

// Client is one registered OAuth client.
type Client struct {
	// Secret authenticates the client (client_secret_basic or _post).
	Secret string
	// Subject is the sub claim of its tokens; default the client id.
	Subject string
	// Claims are added to its tokens (e.g. "groups": []string{"payments"});
	// they override the standard claims of the same name.
	Claims map[string]any
}

// signingKey is one RSA key and the kid it is published under.
type signingKey struct {
	kid  string
	priv *rsa.PrivateKey
}

// IdP is a running provider. Its methods are safe for concurrent use.
type IdP struct {
	opts   Options
	url    string
	issuer string
	ln     net.Listener
	srv    *http.Server
	client *http.Client // trusts the provider's certificate

	mu           sync.Mutex
	current      signingKey
	previous     []signingKey // published in the JWKS until RetireOld
	jwksFetches  int
	tokensIssued int
	// tokenRequests counts every token request, quirks hold how the
	// token endpoint misbehaves (token_quirks.go).
	tokenRequests int
	quirks        tokenQuirks
}

// Start generates a signing key and starts serving. Close stops it.
func Start(opts Options) (*IdP, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.TokenLifetime <= 0 {
		opts.TokenLifetime = time.Hour
	}
	key, err := newSigningKey()
	if err != nil {
		return nil, err
	}
	scheme, client := "http", http.DefaultClient
	var tlsCfg *tls.Config
	if opts.TLSCA != nil {
		if tlsCfg, client, err = serverTLS(opts.TLSCA); err != nil {
			return nil, err
		}
		scheme = "https"
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("idp: listen on %s: %w", opts.Addr, err)
	}
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	p := &IdP{opts: opts, ln: ln, url: scheme + "://" + ln.Addr().String(), current: key, client: client}
	p.issuer = opts.Issuer
	if p.issuer == "" {
		p.issuer = p.url
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.serveDiscovery)
	mux.HandleFunc("GET /jwks", p.serveJWKS)
	mux.HandleFunc("POST /token", p.serveToken)
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go p.srv.Serve(ln) //nolint:errcheck // returns ErrServerClosed on Close
	return p, nil
}

// serverTLS issues the provider's certificate from ca and returns the
// server configuration with it and a client trusting only ca.
func serverTLS(ca *testpki.CA) (*tls.Config, *http.Client, error) {
	certPEM, keyPEM, err := ca.Issue(testpki.ServerLeaf())
	if err != nil {
		return nil, nil, fmt.Errorf("idp: server certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("idp: server certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, client, nil
}

// URL is the provider's base URL, e.g. http://127.0.0.1:41234 (https://
// with Options.TLSCA).
func (p *IdP) URL() string { return p.url }

// HTTPClient is a client for the provider's endpoints: one trusting its
// certificate with Options.TLSCA, else http.DefaultClient.
func (p *IdP) HTTPClient() *http.Client { return p.client }

// Issuer is the iss claim of its tokens.
func (p *IdP) Issuer() string { return p.issuer }

// TokenURL is the token endpoint (client-credentials grant).
func (p *IdP) TokenURL() string { return p.url + "/token" }

// JWKSURL is the JSON Web Key Set endpoint.
func (p *IdP) JWKSURL() string { return p.url + "/jwks" }

// CurrentKID is the kid tokens are signed with now.
func (p *IdP) CurrentKID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.current.kid
}

// JWKSFetches counts the JWKS requests served so far (to observe a
// validator's caching and refresh behaviour).
func (p *IdP) JWKSFetches() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.jwksFetches
}

// TokensIssued counts the tokens the token endpoint has issued.
func (p *IdP) TokensIssued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tokensIssued
}

// Rotate makes a new key the signing key; the old one stays in the JWKS
// (so tokens it signed still validate) until RetireOld.
func (p *IdP) Rotate() {
	key, err := newSigningKey()
	if err != nil {
		panic(err) // crypto/rand failing is not a test condition
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.previous = append(p.previous, p.current)
	p.current = key
}

// RetireOld removes every key but the current one from the JWKS.
func (p *IdP) RetireOld() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.previous = nil
}

// Close stops serving.
func (p *IdP) Close() error {
	if p.client != http.DefaultClient {
		p.client.CloseIdleConnections()
	}
	if err := p.srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// publishedKeys returns the public keys of the JWKS, current first.
func (p *IdP) publishedKeys() jose.JSONWebKeySet {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.jwksFetches++
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{p.current.public()}}
	for _, k := range p.previous {
		set.Keys = append(set.Keys, k.public())
	}
	return set
}

func (k signingKey) public() jose.JSONWebKey {
	return jose.JSONWebKey{Key: &k.priv.PublicKey, KeyID: k.kid, Algorithm: string(jose.RS256), Use: "sig"}
}

func newSigningKey() (signingKey, error) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return signingKey{}, fmt.Errorf("idp: generate RSA key: %w", err)
	}
	return signingKey{kid: randomID(), priv: priv}, nil
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
