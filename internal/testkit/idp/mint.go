package idp

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// MintOption changes how Mint signs a token.
type MintOption func(*mintSettings)

type mintSettings struct {
	unknownKey   bool   // sign with a fresh key that is never published
	kid          string // overrides the kid header
	algNone      bool   // unsigned token, "alg":"none"
	badSignature bool   // a valid token with its signature corrupted
	hmacSecret   []byte // HS256 with this secret instead of RS256
}

// SignedByUnknownKey signs with a fresh RSA key (and kid) the JWKS never
// publishes, so the kid stays unknown after any refresh.
func SignedByUnknownKey() MintOption { return func(s *mintSettings) { s.unknownKey = true } }

// WithKID sets the kid header to kid (the signature is still made with the
// current key, or the unknown key with SignedByUnknownKey).
func WithKID(kid string) MintOption { return func(s *mintSettings) { s.kid = kid } }

// AlgNone produces an unsigned token with "alg":"none" (RFC 7519 section 6).
func AlgNone() MintOption { return func(s *mintSettings) { s.algNone = true } }

// BadSignature produces a token signed by the current key whose signature
// bytes are then altered.
func BadSignature() MintOption { return func(s *mintSettings) { s.badSignature = true } }

// SignedHS256 signs with HMAC-SHA256 under secret (the algorithm-confusion
// attack uses the provider's public key bytes as the secret).
func SignedHS256(secret []byte) MintOption {
	return func(s *mintSettings) { s.hmacSecret = secret }
}

// Mint returns a token with the provider's standard claims (iss, aud if
// configured, iat, nbf, exp = now + TokenLifetime, jti) overridden by
// claims; a claim whose value is nil is removed. Times may be given as
// time.Time or as numbers of seconds since the epoch. Options make broken
// tokens for rejection tests. It panics only if signing itself fails.
func (p *IdP) Mint(claims map[string]any, opts ...MintOption) string {
	var s mintSettings
	for _, o := range opts {
		o(&s)
	}
	all := p.defaultClaims(time.Now())
	for k, v := range claims {
		if v == nil {
			delete(all, k)
			continue
		}
		if t, ok := v.(time.Time); ok {
			v = t.Unix()
		}
		all[k] = v
	}
	token, err := p.sign(all, s)
	if err != nil {
		panic(err)
	}
	return token
}

// PublicKeyJSON returns the current key's public JWK as JSON (what an
// attacker can read from the JWKS).
func (p *IdP) PublicKeyJSON() []byte {
	p.mu.Lock()
	k := p.current.public()
	p.mu.Unlock()
	b, _ := k.MarshalJSON()
	return b
}

func (p *IdP) defaultClaims(now time.Time) map[string]any {
	c := map[string]any{
		"iss": p.issuer,
		"iat": now.Unix(),
		"nbf": now.Unix(),
		"exp": now.Add(p.opts.TokenLifetime).Unix(),
		"jti": randomID(),
	}
	if p.opts.Audience != "" {
		c["aud"] = p.opts.Audience
	}
	return c
}

func (p *IdP) sign(claims map[string]any, s mintSettings) (string, error) {
	if s.algNone {
		return unsignedToken(claims)
	}
	p.mu.Lock()
	key := p.current
	p.mu.Unlock()
	if s.unknownKey {
		priv, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return "", fmt.Errorf("idp: generate unknown key: %w", err)
		}
		key = signingKey{kid: "unknown-" + randomID(), priv: priv}
	}
	if s.kid != "" {
		key.kid = s.kid
	}
	signingKey := jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key.priv, KeyID: key.kid}}
	if s.hmacSecret != nil {
		signingKey = jose.SigningKey{Algorithm: jose.HS256, Key: jose.JSONWebKey{Key: s.hmacSecret, KeyID: key.kid}}
	}
	signer, err := jose.NewSigner(signingKey, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("idp: signer: %w", err)
	}
	token, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("idp: sign: %w", err)
	}
	if s.badSignature {
		token = corruptSignature(token)
	}
	return token, nil
}

// unsignedToken builds header.payload. with "alg":"none" by hand: no JOSE
// library will produce one.
func unsignedToken(claims map[string]any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("idp: claims: %w", err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc.EncodeToString(payload) + ".", nil
}

// corruptSignature flips one bit of the decoded signature.
func corruptSignature(token string) string {
	i := strings.LastIndexByte(token, '.')
	sig, err := base64.RawURLEncoding.DecodeString(token[i+1:])
	if err != nil || len(sig) == 0 {
		return token + "x"
	}
	sig[len(sig)/2] ^= 0x01
	return token[:i+1] + base64.RawURLEncoding.EncodeToString(sig)
}
