package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit/idp"
)

func startIdP(t *testing.T) *idp.IdP {
	t.Helper()
	p, err := idp.Start(idp.Options{Audience: "kafka", TokenLifetime: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func idpKeySet(t *testing.T, p *idp.IdP, minRefresh time.Duration) *KeySet {
	t.Helper()
	ks, err := NewKeySet(JWKSOptions{URL: p.JWKSURL(), Timeout: 2 * time.Second, MinRefreshInterval: minRefresh})
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func newTestValidator(t *testing.T, p *idp.IdP, ks *KeySet, edit func(*JWTValidatorOptions)) *JWTValidator {
	t.Helper()
	opts := JWTValidatorOptions{Keys: ks, Issuer: p.Issuer(), Audience: "kafka", PrincipalClaim: "sub", ClockSkew: 30 * time.Second}
	if edit != nil {
		edit(&opts)
	}
	v, err := NewJWTValidator(opts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestJWTValidatorAccepts(t *testing.T) {
	p := startIdP(t)
	v := newTestValidator(t, p, idpKeySet(t, p, 0), func(o *JWTValidatorOptions) {
		o.PrincipalClaim, o.PrincipalPrefix, o.RequiredScopes = "preferred_username", "idp-", []string{"kafka.write"}
	})
	exp := time.Now().Add(5 * time.Minute).Truncate(time.Second)
	tok, err := v.Validate(context.Background(), p.Mint(map[string]any{
		"sub": "0f3c", "preferred_username": "alice", "exp": exp,
		"scope": "openid kafka.write", "groups": []string{"payments", "ops"}, "admin": true, "tier": 3,
		"nested": map[string]any{"x": 1}, "aud": []string{"other", "kafka"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Principal != "idp-alice" || !tok.Expiry.Equal(exp) {
		t.Fatalf("principal %q expiry %s", tok.Principal, tok.Expiry)
	}
	want := map[string]string{"groups": "payments,ops", "scope": "openid,kafka.write", "admin": "true", "tier": "3", "sub": "0f3c"}
	for name, values := range want {
		if got := strings.Join(tok.Claims[name], ","); got != values {
			t.Errorf("claim %s = %q, want %q", name, got, values)
		}
	}
	if _, ok := tok.Claims["nested"]; ok {
		t.Error("an object claim was kept")
	}
}

// TestJWTValidatorRejects has one case per documented rejection and per
// the validator's other checks; each names the reason the log must give.
func TestJWTValidatorRejects(t *testing.T) {
	p := startIdP(t)
	v := newTestValidator(t, p, idpKeySet(t, p, 0), func(o *JWTValidatorOptions) { o.RequiredScopes = []string{"kafka"} })
	now := time.Now()
	scoped := func(c map[string]any) map[string]any {
		c["sub"], c["scope"] = "alice", "kafka"
		return c
	}
	cases := []struct {
		name, token, reason string
	}{
		{"expired", p.Mint(scoped(map[string]any{"exp": now.Add(-time.Minute)})), "expired at"},
		{"not yet valid", p.Mint(scoped(map[string]any{"nbf": now.Add(time.Minute)})), "not valid before"},
		{"issued in the future", p.Mint(scoped(map[string]any{"iat": now.Add(time.Hour)})), "issued in the future"},
		{"no exp", p.Mint(scoped(map[string]any{"exp": nil})), "no exp claim"},
		{"wrong issuer", p.Mint(scoped(map[string]any{"iss": "https://evil.example"})), `issuer "https://evil.example" is not the expected`},
		{"wrong audience", p.Mint(scoped(map[string]any{"aud": "billing"})), `audience "billing" does not include the expected "kafka"`},
		{"no audience", p.Mint(scoped(map[string]any{"aud": nil})), "does not include the expected"},
		{"bad signature", p.Mint(scoped(map[string]any{}), idp.BadSignature()), "signature does not verify"},
		{"unknown kid", p.Mint(scoped(map[string]any{}), idp.SignedByUnknownKey()), "unknown key id, also after refreshing"},
		{"alg none", p.Mint(scoped(map[string]any{}), idp.AlgNone()), `signature algorithm "none" is not allowed`},
		{"HS256 with the public key", p.Mint(scoped(map[string]any{}), idp.SignedHS256(p.PublicKeyJSON()), idp.WithKID(p.CurrentKID())), `signature algorithm "HS256" is not allowed`},
		{"right kid, another key", p.Mint(scoped(map[string]any{}), idp.SignedByUnknownKey(), idp.WithKID(p.CurrentKID())), "signature does not verify"},
		{"no principal", p.Mint(map[string]any{"scope": "kafka"}), `no non-empty string claim "sub"`},
		{"principal not a string", p.Mint(map[string]any{"scope": "kafka", "sub": 7}), "a registered claim has the wrong type"},
		{"missing scope", p.Mint(map[string]any{"sub": "alice", "scope": "other"}), "lacks the required scope(s) kafka"},
		{"not a JWT", "abc", "not a signed JWT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.Validate(context.Background(), c.token)
			var te *TokenError
			if !errors.As(err, &te) {
				t.Fatalf("accepted or not a TokenError: %v", err)
			}
			if !strings.Contains(te.Reason, c.reason) {
				t.Fatalf("reason %q, want it to say %q", te.Reason, c.reason)
			}
			if strings.Contains(te.Reason, c.token) {
				t.Fatal("the reason holds the token")
			}
		})
	}
	_, err := v.Validate(context.Background(), p.Mint(map[string]any{"sub": "alice", "scope": "x"}))
	var te *TokenError
	if !errors.As(err, &te) || te.Status != "insufficient_scope" || te.Scope != "kafka" {
		t.Fatalf("scope failure: %#v", err)
	}
}

func TestJWTValidatorClockSkew(t *testing.T) {
	p := startIdP(t)
	v := newTestValidator(t, p, idpKeySet(t, p, 0), nil)
	now := time.Now()
	for name, claims := range map[string]map[string]any{
		"expired within the skew":    {"sub": "a", "exp": now.Add(-10 * time.Second)},
		"not before within the skew": {"sub": "a", "nbf": now.Add(10 * time.Second)},
	} {
		if _, err := v.Validate(context.Background(), p.Mint(claims)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestNewJWTValidatorRefusesSymmetricAndNone(t *testing.T) {
	ks, _ := NewKeySet(JWKSOptions{File: "x", Timeout: time.Second})
	for _, alg := range []string{"none", "HS256", "HS512", "rs256"} {
		if _, err := NewJWTValidator(JWTValidatorOptions{Keys: ks, Issuer: "i", PrincipalClaim: "sub", Algorithms: []string{alg}}); err == nil {
			t.Errorf("algorithm %s accepted", alg)
		}
	}
}
