package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// DefaultJWTAlgorithms are the signature algorithms accepted when
// allowed_algorithms is left out: every asymmetric algorithm of RFC 7518
// that identity providers sign access tokens with.
func DefaultJWTAlgorithms() []string {
	return []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"}
}

// SupportedJWTAlgorithms are the algorithms allowed_algorithms may list:
// the defaults and EdDSA. Never "none" nor HS*: a symmetric key would have
// to be shared with every client, and a JWKS's public key used as an HMAC
// secret is the classic algorithm-confusion forgery.
func SupportedJWTAlgorithms() []string { return append(DefaultJWTAlgorithms(), "EdDSA") }

// JWTKeys gives the public keys tokens are verified with. Key returns the
// keys published under kid; when there is none it may refresh its source
// (within ctx) before saying so with an error wrapping ErrUnknownKeyID.
// Implementations must be safe for concurrent use.
type JWTKeys interface {
	Key(ctx context.Context, kid string) ([]jose.JSONWebKey, error)
}

// ErrUnknownKeyID: no key of the key set has the token's kid, even after a
// refresh (or a refresh was not allowed yet).
var ErrUnknownKeyID = errors.New("unknown key id")

// JWTValidatorOptions configure a JWTValidator; see the
// listeners.sasl.oauthbearer keys.
type JWTValidatorOptions struct {
	Keys JWTKeys
	// Issuer must equal the iss claim exactly.
	Issuer string
	// Audience, when set, must be one of the aud claim's values.
	Audience string
	// PrincipalClaim names the claim the principal is read from (a
	// non-empty string claim); PrincipalPrefix is put before it.
	PrincipalClaim  string
	PrincipalPrefix string
	// ClockSkew is the leeway for exp, nbf and iat.
	ClockSkew time.Duration
	// Algorithms are the accepted JWS algorithms (see
	// SupportedJWTAlgorithms).
	Algorithms []string
	// RequiredScopes must all be in the token's scope claim (a
	// space-separated string or an array; scp is read when scope is
	// absent, as Entra ID names it).
	RequiredScopes []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// JWTValidator checks OAUTHBEARER tokens: JWS compact JWTs signed with an
// allowed algorithm by a key of Keys, with the expected issuer and
// audience, within their validity (exp required), with the required
// scopes and a principal claim. It is safe for concurrent use.
type JWTValidator struct {
	opts JWTValidatorOptions
	algs []jose.SignatureAlgorithm
}

// NewJWTValidator checks opts.
func NewJWTValidator(opts JWTValidatorOptions) (*JWTValidator, error) {
	if opts.Keys == nil {
		return nil, errors.New("JWT validator: no key source")
	}
	if opts.Issuer == "" {
		return nil, errors.New("JWT validator: no issuer")
	}
	if opts.PrincipalClaim == "" {
		return nil, errors.New("JWT validator: no principal claim")
	}
	if opts.ClockSkew < 0 {
		return nil, fmt.Errorf("JWT validator: negative clock skew %s", opts.ClockSkew)
	}
	if len(opts.Algorithms) == 0 {
		opts.Algorithms = DefaultJWTAlgorithms()
	}
	v := &JWTValidator{opts: opts}
	for _, a := range opts.Algorithms {
		if !slices.Contains(SupportedJWTAlgorithms(), a) {
			return nil, fmt.Errorf("JWT validator: algorithm %q is not allowed (valid: %s)", a, strings.Join(SupportedJWTAlgorithms(), ", "))
		}
		v.algs = append(v.algs, jose.SignatureAlgorithm(a))
	}
	if v.opts.Now == nil {
		v.opts.Now = time.Now
	}
	return v, nil
}

// ValidatedToken is what a valid token says.
type ValidatedToken struct {
	// Principal is the principal claim with the prefix.
	Principal string
	// Expiry is the exp claim.
	Expiry time.Time
	// Claims are the token's claims as strings: a string claim is one
	// value, an array its string (or number/bool) elements, a number or
	// bool its JSON text, and scope/scp their space-separated parts.
	// Objects are left out.
	Claims map[string][]string
}

// TokenError is an invalid token: its Status is the KIP-255 error status
// sent to the client ("invalid_token" or "insufficient_scope"), its Reason
// is for kproxy's log and never holds the token.
type TokenError struct {
	Status string
	Scope  string // for insufficient_scope: the scopes required
	Reason string
}

func (e *TokenError) Error() string { return e.Reason }

func invalidToken(format string, args ...any) error {
	return &TokenError{Status: "invalid_token", Reason: fmt.Sprintf(format, args...)}
}

// maxLoggedClaim bounds how much of a client-chosen claim value a reason
// repeats.
const maxLoggedClaim = 128

func clip(s string) string {
	if len(s) > maxLoggedClaim {
		return s[:maxLoggedClaim] + "..."
	}
	return s
}

// Validate checks token within ctx (a key refresh waits at most that
// long). An invalid token is a *TokenError.
func (v *JWTValidator) Validate(ctx context.Context, token string) (ValidatedToken, error) {
	parsed, err := jose.ParseSignedCompact(token, v.algs)
	if err != nil {
		if alg := unverifiedAlg(token); alg != "" && !slices.Contains(v.opts.Algorithms, alg) {
			return ValidatedToken{}, invalidToken("signature algorithm %q is not allowed", clip(alg))
		}
		return ValidatedToken{}, invalidToken("not a signed JWT: %v", err)
	}
	header := parsed.Signatures[0].Header // the compact form has exactly one
	keys, err := v.opts.Keys.Key(ctx, header.KeyID)
	if err != nil {
		return ValidatedToken{}, invalidToken("kid %q: %v", clip(header.KeyID), err)
	}
	var payload []byte
	for _, k := range keys {
		if k.Algorithm != "" && k.Algorithm != header.Algorithm {
			continue // RFC 7517 section 4.4: the key is for another algorithm
		}
		if payload, err = parsed.Verify(k.Key); err == nil {
			break
		}
		payload = nil
	}
	if payload == nil {
		return ValidatedToken{}, invalidToken("signature does not verify with key %q (%s)", clip(header.KeyID), header.Algorithm)
	}
	claims, err := parseJWTClaims(payload)
	if err != nil {
		return ValidatedToken{}, invalidToken("%v", err)
	}
	return v.checkClaims(claims)
}

// unverifiedAlg is the alg of token's header, for a clear reason when it is
// not allowed; "" when the header cannot be read.
func unverifiedAlg(token string) string {
	head, _, ok := strings.Cut(token, ".")
	if !ok {
		return ""
	}
	raw, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return ""
	}
	var h struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(raw, &h) != nil {
		return ""
	}
	return h.Alg
}

// registeredClaims are the registered claims (RFC 7519 section 4.1) a
// validation reads, by exact name.
type registeredClaims struct {
	expiry, notBefore, issuedAt time.Time
	hasNotBefore, hasIssuedAt   bool
	issuer                      string
	audience                    []string
}

func readRegisteredClaims(c jwtClaims) (registeredClaims, error) {
	var r registeredClaims
	var hasExpiry bool
	var err error
	if r.expiry, hasExpiry, err = c.numericDate("exp"); err != nil {
		return r, err
	}
	if !hasExpiry {
		return r, errors.New("no exp claim")
	}
	if r.notBefore, r.hasNotBefore, err = c.numericDate("nbf"); err != nil {
		return r, err
	}
	if r.issuedAt, r.hasIssuedAt, err = c.numericDate("iat"); err != nil {
		return r, err
	}
	if r.issuer, _, err = c.str("iss"); err != nil {
		return r, err
	}
	if _, _, err = c.str("sub"); err != nil {
		return r, err
	}
	if r.audience, err = c.audience(); err != nil {
		return r, err
	}
	return r, nil
}

func (v *JWTValidator) checkClaims(all jwtClaims) (ValidatedToken, error) {
	std, err := readRegisteredClaims(all)
	if err != nil {
		return ValidatedToken{}, invalidToken("%v", err)
	}
	now, skew := v.opts.Now(), v.opts.ClockSkew
	switch {
	case now.After(std.expiry.Add(skew)):
		return ValidatedToken{}, invalidToken("expired at %s (%s ago, clock skew %s)", std.expiry.UTC().Format(time.RFC3339), now.Sub(std.expiry).Round(time.Second), skew)
	case std.hasNotBefore && now.Add(skew).Before(std.notBefore):
		return ValidatedToken{}, invalidToken("not valid before %s (in %s, clock skew %s)", std.notBefore.UTC().Format(time.RFC3339), std.notBefore.Sub(now).Round(time.Second), skew)
	case std.hasIssuedAt && now.Add(skew).Before(std.issuedAt):
		return ValidatedToken{}, invalidToken("issued in the future, at %s (clock skew %s)", std.issuedAt.UTC().Format(time.RFC3339), skew)
	case std.issuer != v.opts.Issuer:
		return ValidatedToken{}, invalidToken("issuer %q is not the expected %q", clip(std.issuer), v.opts.Issuer)
	case v.opts.Audience != "" && !slices.Contains(std.audience, v.opts.Audience):
		return ValidatedToken{}, invalidToken("audience %q does not include the expected %q", clip(strings.Join(std.audience, ",")), v.opts.Audience)
	}
	claims, err := flattenClaims(all)
	if err != nil {
		return ValidatedToken{}, invalidToken("%v", err)
	}
	principal, _, err := all.str(v.opts.PrincipalClaim)
	if err != nil || principal == "" {
		return ValidatedToken{}, invalidToken("no non-empty string claim %q to take the principal from", v.opts.PrincipalClaim)
	}
	if missing := missingScopes(claims, v.opts.RequiredScopes); len(missing) > 0 {
		return ValidatedToken{}, &TokenError{
			Status: "insufficient_scope",
			Scope:  strings.Join(v.opts.RequiredScopes, " "),
			Reason: fmt.Sprintf("principal %q lacks the required scope(s) %s", clip(principal), strings.Join(missing, " ")),
		}
	}
	return ValidatedToken{Principal: v.opts.PrincipalPrefix + principal, Expiry: std.expiry, Claims: claims}, nil
}

func missingScopes(claims map[string][]string, required []string) []string {
	have := claims["scope"]
	if _, ok := claims["scope"]; !ok {
		have = claims["scp"]
	}
	var missing []string
	for _, s := range required {
		if !slices.Contains(have, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// flattenClaims turns the token's claims into ValidatedToken.Claims; a
// scope or scp that is not a list of scope-tokens is an error.
func flattenClaims(all jwtClaims) (map[string][]string, error) {
	out := make(map[string][]string, len(all))
	for name, v := range all {
		scope := name == "scope" || name == "scp"
		var values []string
		switch v := v.(type) {
		case string:
			values = []string{v}
			if scope {
				var err error
				if values, err = ParseScope(v); err != nil {
					return nil, fmt.Errorf("claim %s: %w", name, err)
				}
			}
		case []any:
			for _, e := range v {
				s, ok := scalarString(e)
				if !ok {
					continue
				}
				if scope {
					if err := CheckScopeToken(s); err != nil {
						return nil, fmt.Errorf("claim %s: %w", name, err)
					}
				}
				values = append(values, s)
			}
		default:
			s, ok := scalarString(v)
			if !ok {
				continue
			}
			values = []string{s}
		}
		out[name] = values
	}
	return out, nil
}

// scalarString is a string claim value, or a number's or bool's JSON text.
func scalarString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}
