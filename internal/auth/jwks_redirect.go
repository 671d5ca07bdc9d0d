package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// maxJWKSRedirects bounds the redirects one JWKS fetch follows.
const maxJWKSRedirects = 5

// errJWKSRedirect is a JWKS redirect kproxy does not follow.
var errJWKSRedirect = errors.New("JWKS redirect refused")

// checkJWKSRedirect is the JWKS client's redirect policy: a redirect is
// followed only to the same host (and port) as jwks_url, and never from
// https to http. The keys decide who may log in: a redirect to plain HTTP
// lets anyone on the path substitute them, one to another host hands the
// choice to whoever controls the redirecting endpoint. An identity
// provider that moved its keys is configured with the URL they moved to.
func checkJWKSRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxJWKSRedirects {
		return fmt.Errorf("%w: more than %d redirects", errJWKSRedirect, maxJWKSRedirects)
	}
	from, to := via[len(via)-1].URL, req.URL
	switch {
	case strings.EqualFold(from.Scheme, "https") && !strings.EqualFold(to.Scheme, "https"):
		return fmt.Errorf("%w: %s redirects from https to %s", errJWKSRedirect, from.Redacted(), to.Redacted())
	case !strings.EqualFold(to.Host, via[0].URL.Host):
		return fmt.Errorf("%w: %s redirects to another host, %s (set jwks_url to the URL the keys are served at)", errJWKSRedirect, via[0].URL.Redacted(), to.Redacted())
	}
	return nil
}
