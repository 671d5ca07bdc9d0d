package auth

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// maxJWKSRedirects bounds the redirects one JWKS fetch follows.
const maxJWKSRedirects = 5

// errJWKSRedirect is a JWKS redirect kproxy does not follow.
var errJWKSRedirect = errors.New("JWKS redirect refused")

// jwksRedirectPolicy is the JWKS client's CheckRedirect: a redirect is
// followed only to the same host (and port) as jwks_url or to a host of
// allowedHosts (host, any port, or host:port), and never from https to
// http. The keys decide who may log in: a redirect to plain HTTP lets
// anyone on the path substitute them, one to another host hands the choice
// to whoever controls the redirecting endpoint. An identity provider that
// moved its keys is configured with the URL they moved to, or its new
// host is allowed.
func jwksRedirectPolicy(allowedHosts []string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxJWKSRedirects {
			return fmt.Errorf("%w: more than %d redirects", errJWKSRedirect, maxJWKSRedirects)
		}
		from, to := via[len(via)-1].URL, req.URL
		switch {
		case strings.EqualFold(from.Scheme, "https") && !strings.EqualFold(to.Scheme, "https"):
			return fmt.Errorf("%w: %s redirects from https to %s", errJWKSRedirect, from.Redacted(), to.Redacted())
		case !strings.EqualFold(to.Host, via[0].URL.Host) && !redirectHostAllowed(to, allowedHosts):
			return fmt.Errorf("%w: %s redirects to another host, %s (set jwks_url to the URL the keys are served at, or list the host in jwks_allowed_redirect_hosts)",
				errJWKSRedirect, via[0].URL.Redacted(), to.Redacted())
		}
		return nil
	}
}

// redirectHostAllowed reports whether u's host is one of allowed: an entry
// with a port names that port only, one without any port.
func redirectHostAllowed(u *url.URL, allowed []string) bool {
	for _, h := range allowed {
		if strings.EqualFold(h, u.Host) || strings.EqualFold(h, u.Hostname()) {
			return true
		}
	}
	return false
}
