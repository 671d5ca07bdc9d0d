package idp

import (
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/kproxy/kproxy/internal/testpki"
)

func startTestIdP(t *testing.T) *IdP { t.Helper(); return startTestIdPTLS(t, nil) }

// startTestIdPTLS is startTestIdP serving HTTPS with a certificate of ca
// (nil: plain HTTP).
func startTestIdPTLS(t *testing.T, ca *testpki.CA) *IdP {
	t.Helper()
	p, err := Start(Options{
		TLSCA:         ca,
		Audience:      "kafka",
		TokenLifetime: 5 * time.Minute,
		Clients: map[string]Client{
			"app": {Secret: "s3cret", Subject: "alice", Claims: map[string]any{"groups": []string{"payments"}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func getJSON(t *testing.T, p *IdP, u string, v any) {
	t.Helper()
	resp, err := p.HTTPClient().Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// verify checks token against the provider's published JWKS, as a relying
// party would, and returns its claims.
func verify(t *testing.T, p *IdP, token string) (map[string]any, error) {
	t.Helper()
	var set jose.JSONWebKeySet
	getJSON(t, p, p.JWKSURL(), &set)
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return nil, err
	}
	claims := map[string]any{}
	if err := parsed.Claims(set, &claims); err != nil {
		return nil, err
	}
	return claims, nil
}

func requestToken(t *testing.T, p *IdP, basic bool, secret string) (*http.Response, map[string]any) {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {"kafka.produce"}}
	if !basic {
		form.Set("client_id", "app")
		form.Set("client_secret", secret)
	}
	req, _ := http.NewRequest(http.MethodPost, p.TokenURL(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		req.SetBasicAuth("app", secret)
	}
	resp, err := p.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body := map[string]any{}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp, body
}

// TestDiscoveryAndClientCredentials: the provider's endpoints work alike
// over HTTP and, with a CA, over HTTPS.
func TestDiscoveryAndClientCredentials(t *testing.T) {
	ca, err := testpki.NewCA("idp-test-ca")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("http", func(t *testing.T) { testDiscoveryAndClientCredentials(t, startTestIdP(t), "http://") })
	t.Run("https", func(t *testing.T) { testDiscoveryAndClientCredentials(t, startTestIdPTLS(t, ca), "https://") })
}

func testDiscoveryAndClientCredentials(t *testing.T, p *IdP, scheme string) {
	if !strings.HasPrefix(p.URL(), scheme) || !strings.HasPrefix(p.TokenURL(), scheme) || !strings.HasPrefix(p.JWKSURL(), scheme) {
		t.Fatalf("URLs %s, %s, %s: want %s", p.URL(), p.TokenURL(), p.JWKSURL(), scheme)
	}
	var disco map[string]any
	getJSON(t, p, p.URL()+"/.well-known/openid-configuration", &disco)
	if disco["issuer"] != p.Issuer() || disco["token_endpoint"] != p.TokenURL() || disco["jwks_uri"] != p.JWKSURL() {
		t.Fatalf("discovery = %v", disco)
	}
	for _, basic := range []bool{true, false} {
		resp, body := requestToken(t, p, basic, "s3cret")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("basic=%v: %s %v", basic, resp.Status, body)
		}
		if body["token_type"] != "Bearer" || body["scope"] != "kafka.produce" || body["expires_in"].(float64) != 300 {
			t.Fatalf("basic=%v: token response %v", basic, body)
		}
		claims, err := verify(t, p, body["access_token"].(string))
		if err != nil {
			t.Fatalf("basic=%v: issued token does not verify: %v", basic, err)
		}
		if claims["sub"] != "alice" || claims["aud"] != "kafka" || claims["iss"] != p.Issuer() ||
			claims["scope"] != "kafka.produce" || claims["client_id"] != "app" {
			t.Fatalf("basic=%v: claims %v", basic, claims)
		}
		if g, _ := claims["groups"].([]any); len(g) != 1 || g[0] != "payments" {
			t.Fatalf("groups claim %v", claims["groups"])
		}
		resp, _ = requestToken(t, p, basic, "wrong")
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("basic=%v wrong secret: %s", basic, resp.Status)
		}
	}
	if p.TokensIssued() != 2 {
		t.Fatalf("TokensIssued = %d", p.TokensIssued())
	}
}

// TestHTTPSNeedsTheCA: over HTTPS the provider's certificate verifies
// against its CA only, so clients with the system roots refuse it.
func TestHTTPSNeedsTheCA(t *testing.T) {
	ca, err := testpki.NewCA("idp-test-ca")
	if err != nil {
		t.Fatal(err)
	}
	p := startTestIdPTLS(t, ca)
	if p.HTTPClient() == http.DefaultClient {
		t.Fatal("HTTPClient is the default client over HTTPS")
	}
	resp, err := http.Get(p.JWKSURL())
	if err == nil {
		resp.Body.Close()
		t.Fatalf("GET %s with the system roots: %s, want a certificate error", p.JWKSURL(), resp.Status)
	}
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("GET %s with the system roots: %v, want x509.UnknownAuthorityError", p.JWKSURL(), err)
	}
}

func TestRotateKeepsPreviousKeyUntilRetired(t *testing.T) {
	p := startTestIdP(t)
	oldKID := p.CurrentKID()
	oldToken := p.Mint(map[string]any{"sub": "alice"})
	p.Rotate()
	if p.CurrentKID() == oldKID {
		t.Fatal("Rotate kept the kid")
	}
	newToken := p.Mint(map[string]any{"sub": "alice"})
	if _, err := verify(t, p, oldToken); err != nil {
		t.Fatalf("old token after Rotate: %v", err)
	}
	if _, err := verify(t, p, newToken); err != nil {
		t.Fatalf("new token after Rotate: %v", err)
	}
	p.RetireOld()
	if _, err := verify(t, p, oldToken); err == nil {
		t.Fatal("old token still verifies after RetireOld")
	}
	if _, err := verify(t, p, newToken); err != nil {
		t.Fatalf("new token after RetireOld: %v", err)
	}
}

func TestMintBrokenTokens(t *testing.T) {
	p := startTestIdP(t)
	past := time.Now().Add(-time.Hour)
	claims, err := verify(t, p, p.Mint(map[string]any{"exp": past, "aud": nil, "sub": "bob"}))
	if err != nil {
		t.Fatal(err)
	}
	if claims["exp"].(float64) != float64(past.Unix()) || claims["aud"] != nil || claims["sub"] != "bob" {
		t.Fatalf("overrides not applied: %v", claims)
	}
	for name, opt := range map[string]MintOption{
		"unknown key":   SignedByUnknownKey(),
		"alg none":      AlgNone(),
		"bad signature": BadSignature(),
		"HS256":         SignedHS256(p.PublicKeyJSON()),
		"wrong kid":     WithKID("nope"),
	} {
		if _, err := verify(t, p, p.Mint(nil, opt)); err == nil {
			t.Errorf("%s: token verified", name)
		}
	}
}
