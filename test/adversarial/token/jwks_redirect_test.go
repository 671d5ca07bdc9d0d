package token

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/idp"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// jwksRedirectKproxy starts kproxy terminating OAUTHBEARER with keys from
// jwksURL for tokens of issuer.
func jwksRedirectKproxy(t *testing.T, jwksURL, issuer string, extra ...string) *testkit.Binary {
	t.Helper()
	return advkit.Start(t, oauthConfig(advkit.Kfake(t, 1)[0], testkit.TerminateOAuthBearer(jwksURL, issuer, extra...), ""))
}

func startJWKSRedirectIdP(t *testing.T, issuer string) *idp.IdP {
	t.Helper()
	return idp.StartTest(t, idp.Options{Audience: "kafka", Issuer: issuer})
}

// TestJWKSRedirectToAnotherHostIsNotFollowed: the attacker controls the
// endpoint at jwks_url (or one on its path) and redirects the key fetch to
// a JWKS of its own on another host, then signs tokens with its key for
// the configured issuer. kproxy does not follow the redirect (the log says
// why), never fetches the attacker's keys, and refuses the attacker's
// token with the invalid_token challenge and SASL_AUTHENTICATION_FAILED.
// A redirect within jwks_url's host is still followed, and so is one to a
// host listed in jwks_allowed_redirect_hosts: the provider's own token
// logs in through them.
func TestJWKSRedirectToAnotherHostIsNotFollowed(t *testing.T) {
	const issuer = "https://idp.example"
	attacker := startJWKSRedirectIdP(t, issuer)
	legit := startJWKSRedirectIdP(t, issuer)
	mux := http.NewServeMux()
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, attacker.JWKSURL(), http.StatusFound)
	})
	mux.HandleFunc("/cdn", func(w http.ResponseWriter, r *http.Request) {
		// localhost is another host than the redirector's 127.0.0.1.
		http.Redirect(w, r, strings.Replace(legit.JWKSURL(), "127.0.0.1", "localhost", 1), http.StatusFound)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/keys", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, _ *http.Request) {
		resp, err := http.Get(legit.JWKSURL())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, resp.Body)
	})
	redirector := httptest.NewServer(mux)
	t.Cleanup(redirector.Close)

	kp := jwksRedirectKproxy(t, redirector.URL+"/jwks", issuer)
	got := oauthLogin(t, kp.Bootstrap, attacker.Mint(map[string]any{"sub": "admin"}))
	if got.Challenge != `{"status":"invalid_token"}` || got.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Fatalf("the attacker's token: challenge %q then %v, want the invalid_token challenge then SASL_AUTHENTICATION_FAILED",
			got.Challenge, kerr.ErrorForCode(got.ErrorCode))
	}
	// The login's unknown kid refreshed the keys, through the redirect.
	line := kp.WaitLog("the refused JWKS redirect", func(l testkit.LogLine) bool {
		msg, _ := l["error"].(string)
		return strings.Contains(msg, "JWKS redirect refused") && strings.Contains(msg, "another host")
	})
	t.Logf("kproxy: %s: %s", line.Message(), line["error"])
	if n := attacker.JWKSFetches(); n != 0 {
		t.Fatalf("kproxy fetched the attacker's JWKS %d times", n)
	}

	same := jwksRedirectKproxy(t, redirector.URL+"/moved", issuer)
	if got := oauthLogin(t, same.Bootstrap, legit.Mint(map[string]any{"sub": "alice"})); got.ErrorCode != 0 || got.Challenge != "" {
		t.Fatalf("a token of the provider, keys redirected within the host: challenge %q, %v", got.Challenge, kerr.ErrorForCode(got.ErrorCode))
	}
	allowed := jwksRedirectKproxy(t, redirector.URL+"/cdn", issuer, "jwks_allowed_redirect_hosts: [localhost]")
	if got := oauthLogin(t, allowed.Bootstrap, legit.Mint(map[string]any{"sub": "alice"})); got.ErrorCode != 0 || got.Challenge != "" {
		t.Fatalf("a token of the provider, keys redirected to an allowed host: challenge %q, %v", got.Challenge, kerr.ErrorForCode(got.ErrorCode))
	}
}
