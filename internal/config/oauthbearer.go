package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kproxy/kproxy/internal/auth"
)

// Defaults of listeners.sasl.oauthbearer.
const (
	DefaultOAuthPrincipalClaim = "sub"
	DefaultOAuthClockSkew      = 30 * time.Second
	DefaultJWKSRefreshInterval = time.Hour
	DefaultJWKSTimeout         = 5 * time.Second
	maxOAuthClockSkew          = 10 * time.Minute
	minJWKSRefreshInterval     = time.Second
	maxJWKSTimeout             = time.Minute
)

// OAuthBearer is listeners.sasl.oauthbearer: how OAUTHBEARER tokens (JWTs)
// are validated in terminate mode.
type OAuthBearer struct {
	// JWKSURL or JWKSFile (exactly one) hold the identity provider's
	// public signing keys (a JSON Web Key Set).
	JWKSURL  string `yaml:"jwks_url"`
	JWKSFile string `yaml:"jwks_file"`
	// JWKSCAFile is a PEM bundle of the CAs trusted for jwks_url instead
	// of the system roots (an identity provider behind a private CA).
	JWKSCAFile string `yaml:"jwks_ca_file"`
	// JWKSAllowedRedirectHosts are hosts (name or IP, optionally :port)
	// other than jwks_url's that a JWKS fetch may be redirected to; a
	// redirect from https to http is refused whatever the host.
	JWKSAllowedRedirectHosts []string `yaml:"jwks_allowed_redirect_hosts"`
	// Issuer must equal the token's iss claim exactly.
	Issuer string `yaml:"issuer"`
	// Audience, when set, must be one of the token's aud values.
	Audience string `yaml:"audience"`
	// PrincipalClaim is the claim naming the user (default sub);
	// PrincipalPrefix is put before its value.
	PrincipalClaim  string `yaml:"principal_claim"`
	PrincipalPrefix string `yaml:"principal_prefix"`
	// ClockSkew is the leeway for exp, nbf and iat (default 30s).
	ClockSkew time.Duration `yaml:"clock_skew"`
	// AllowedAlgorithms default to auth.DefaultJWTAlgorithms.
	AllowedAlgorithms []string `yaml:"allowed_algorithms"`
	// RequiredScopes must all be in the token's scope (or scp) claim.
	RequiredScopes []string `yaml:"required_scopes"`
	// JWKSRefreshInterval schedules refreshes of the keys (default 1h);
	// an unknown kid also refreshes them, at most once per
	// min(jwks_refresh_interval, 10s).
	JWKSRefreshInterval time.Duration `yaml:"jwks_refresh_interval"`
	// JWKSTimeout bounds one fetch of jwks_url (default 5s): no login
	// waits longer for keys.
	JWKSTimeout time.Duration `yaml:"jwks_timeout"`
}

func (o *OAuthBearer) applyDefaults() {
	if o.PrincipalClaim == "" {
		o.PrincipalClaim = DefaultOAuthPrincipalClaim
	}
	if o.ClockSkew == 0 {
		o.ClockSkew = DefaultOAuthClockSkew
	}
	if len(o.AllowedAlgorithms) == 0 {
		o.AllowedAlgorithms = auth.DefaultJWTAlgorithms()
	}
	if o.JWKSRefreshInterval == 0 {
		o.JWKSRefreshInterval = DefaultJWKSRefreshInterval
	}
	if o.JWKSTimeout == 0 {
		o.JWKSTimeout = DefaultJWKSTimeout
	}
}

// urlScheme is s's scheme, lower case ("" if s does not parse).
func urlScheme(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return u.Scheme
}

// validate checks o after applyDefaults; key is its full key.
func (o *OAuthBearer) validate(key string) []error {
	var errs []error
	bad := func(k, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: %s", key, k, fmt.Sprintf(format, args...)))
	}
	switch {
	case o.JWKSURL == "" && o.JWKSFile == "":
		errs = append(errs, fmt.Errorf("%s: set jwks_url (the identity provider's JWKS endpoint) or jwks_file", key))
	case o.JWKSURL != "" && o.JWKSFile != "":
		errs = append(errs, fmt.Errorf("%s: set one of jwks_url and jwks_file, not both", key))
	case o.JWKSURL != "":
		if u, err := url.Parse(o.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			bad("jwks_url", "%q: must be an absolute https:// (or http://) URL", o.JWKSURL)
		}
	}
	if o.JWKSCAFile != "" {
		switch {
		case o.JWKSFile != "":
			bad("jwks_ca_file", "only with jwks_url (jwks_file is read from disk, not fetched over https); remove it or use jwks_url")
		case urlScheme(o.JWKSURL) == "http":
			bad("jwks_ca_file", "only with an https:// jwks_url (%q is plain http, no certificate is verified)", o.JWKSURL)
		}
	}
	for i, h := range o.JWKSAllowedRedirectHosts {
		k := fmt.Sprintf("jwks_allowed_redirect_hosts[%d]", i)
		switch u, err := url.Parse("//" + h); {
		case o.JWKSURL == "":
			bad(k, "only with jwks_url (jwks_file is read from disk, not fetched)")
		case err != nil || h == "" || u.Host != h || u.Hostname() == "" || u.Path != "" || u.User != nil:
			bad(k, "%q: must be a host name or IP address, optionally with :port (e.g. keys.idp.example.com or keys.idp.example.com:8443), without scheme or path", h)
		}
	}
	if o.Issuer == "" {
		bad("issuer", "required: the exact iss claim of the identity provider's tokens (its OpenID discovery document's \"issuer\")")
	}
	if o.PrincipalClaim == "" {
		bad("principal_claim", "must name a claim (default sub)")
	}
	if o.ClockSkew < 0 || o.ClockSkew > maxOAuthClockSkew {
		bad("clock_skew", "%s: must be between 0s and %s", o.ClockSkew, maxOAuthClockSkew)
	}
	seen := map[string]bool{}
	for i, a := range o.AllowedAlgorithms {
		k := fmt.Sprintf("allowed_algorithms[%d]", i)
		switch {
		case strings.EqualFold(a, "none") || strings.HasPrefix(strings.ToUpper(a), "HS"):
			bad(k, "%q is never allowed: unsigned and shared-secret (HMAC) tokens can be forged by anyone holding the secret or the public key; use %s", a, strings.Join(auth.SupportedJWTAlgorithms(), ", "))
		case !slices.Contains(auth.SupportedJWTAlgorithms(), a):
			bad(k, "%q: must be one of %s (names are case-sensitive)", a, strings.Join(auth.SupportedJWTAlgorithms(), ", "))
		case seen[a]:
			bad(k, "%s listed twice", a)
		}
		seen[a] = true
	}
	for i, s := range o.RequiredScopes {
		if err := auth.CheckScopeToken(s); err != nil {
			bad(fmt.Sprintf("required_scopes[%d]", i), "%q: a scope is a non-empty token of printable ASCII without spaces, quotes or backslashes (RFC 6749 section 3.3)", s)
		}
	}
	if o.JWKSRefreshInterval < minJWKSRefreshInterval {
		bad("jwks_refresh_interval", "%s: must be at least %s", o.JWKSRefreshInterval, minJWKSRefreshInterval)
	}
	if o.JWKSTimeout <= 0 || o.JWKSTimeout > maxJWKSTimeout {
		bad("jwks_timeout", "%s: must be positive and at most %s", o.JWKSTimeout, maxJWKSTimeout)
	}
	return errs
}
