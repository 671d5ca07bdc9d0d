package config

import (
	"fmt"
	"net"
	"net/url"

	"github.com/kproxy/kproxy/internal/auth"
)

// validateOAuth checks upstream.sasl with mechanism OAUTHBEARER: kproxy is
// an OAuth client of token_endpoint (client-credentials grant).
func (u *UpstreamSASL) validateOAuth(key string) []error {
	var errs []error
	bad := func(sub, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: "+format, append([]any{key, sub}, args...)...))
	}
	for _, k := range []struct{ name, v string }{{"username", u.Username}, {"password", u.Password}, {"password_file", u.PasswordFile}, {"password_env", u.PasswordEnv}} {
		if k.v != "" {
			bad(k.name, "not used with mechanism %s (kproxy logs in with its OAuth client: client_id and client_secret*)", auth.OAuthBearer)
		}
	}
	if err := validTokenEndpoint(u.TokenEndpoint); err != nil {
		bad("token_endpoint", "%v", err)
	}
	if u.ClientID == "" {
		bad("client_id", "required with mechanism %s", auth.OAuthBearer)
	}
	if n := countSet(u.ClientSecret, u.ClientSecretFile, u.ClientSecretEnv); n != 1 {
		// Never echo the secret, even to say it is set.
		errs = append(errs, fmt.Errorf("%s: set exactly one of client_secret, client_secret_file, client_secret_env (%d set)", key, n))
	}
	if _, err := auth.ParseScope(u.Scope); err != nil {
		bad("scope", "%q: scopes are separated by single spaces, each of printable ASCII without quote or backslash (RFC 6749 section 3.3)", u.Scope)
	}
	if u.TokenTimeout < 0 {
		bad("token_timeout", "%s: must be positive", u.TokenTimeout)
	}
	if u.TokenEndpointCAFile != "" {
		if urlScheme(u.TokenEndpoint) == "http" {
			bad("token_endpoint_ca_file", "only with an https:// token_endpoint (%q is plain http, no certificate is verified)", u.TokenEndpoint)
		}
	}
	return errs
}

// validTokenEndpoint accepts an absolute https URL, or http to a loopback
// host (a local identity provider or sidecar): anything else would send
// the client secret in the clear.
func validTokenEndpoint(s string) error {
	if s == "" {
		return fmt.Errorf("required with mechanism %s: the identity provider's token URL", auth.OAuthBearer)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q: %v", s, err)
	}
	switch {
	case u.Host == "":
		return fmt.Errorf("%q: must be an absolute https:// URL", s)
	case u.User != nil:
		return fmt.Errorf("%q: credentials in the URL are not allowed; use client_id and client_secret*", s)
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
		return nil
	case u.Scheme == "http":
		return fmt.Errorf("%q: http sends the client secret in the clear; use https (http is accepted for loopback hosts only)", s)
	}
	return fmt.Errorf("%q: scheme must be https", s)
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// oauthKeysSet lists the OAUTHBEARER-only keys that are set.
func (u *UpstreamSASL) oauthKeysSet() []string {
	var set []string
	for _, k := range []struct{ name, v string }{{"token_endpoint", u.TokenEndpoint}, {"client_id", u.ClientID}, {"client_secret", u.ClientSecret},
		{"client_secret_file", u.ClientSecretFile}, {"client_secret_env", u.ClientSecretEnv}, {"scope", u.Scope},
		{"token_endpoint_ca_file", u.TokenEndpointCAFile}} {
		if k.v != "" {
			set = append(set, k.name)
		}
	}
	if u.TokenTimeout != 0 {
		set = append(set, "token_timeout")
	}
	return set
}
