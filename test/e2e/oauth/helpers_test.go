// Package e2eoauth drives kproxy's OAUTHBEARER termination end to end: a
// real OIDC provider (internal/testkit/idp) issuing signed tokens over
// HTTP (or HTTPS behind a test CA), a real kproxy validating them against
// the provider's JWKS with the policy enforcer plugged in, a kfake cluster
// behind it, and franz-go clients authenticating with its sasl/oauth
// mechanism.
package e2eoauth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/idp"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// The provider's clients: who they are and what the policy lets them do.
var clients = map[string]idp.Client{
	// payments-app may write and read "payments" by its groups claim.
	"payments-app": {Secret: "payments-secret", Subject: "svc-payments", Claims: map[string]any{"groups": []string{"payments", "ops"}}},
	// reporting may read "events" by its principal, User:reporting.
	"reporting": {Secret: "reporting-secret", Subject: "reporting", Claims: map[string]any{"groups": []string{"analytics"}}},
	// mallory has a valid token but the policy grants her nothing.
	"mallory": {Secret: "mallory-secret", Subject: "mallory"},
}

const testPolicy = `
policy:
  default: deny
  rules:
    - {name: see, principals: ["*"], allow: [describe], topics: ["*"], groups: ["*"]}
    - {name: payments-by-claim, principals: ["claim:groups=payments"], allow: [write, read], topics: ["payments"], groups: ["payments-*"]}
    - {name: reporting-by-user, principals: ["User:reporting"], allow: [read], topics: ["events"], groups: ["reporting-*"]}
`

// env is one test's provider, cluster and kproxy.
type env struct {
	t       *testing.T
	idp     *idp.IdP
	cluster *kfake.Cluster
	proxy   *kproxytest.Kproxy
	log     *logbuf.Buffer // kproxy's log, debug level
	audit   kproxytest.AuditFile
}

// newEnv starts the provider (tokens valid for tokenLifetime), kfake with
// the topics payments and events, and kproxy terminating OAUTHBEARER with
// extraOAuth added to listeners.sasl.oauthbearer.
func newEnv(t *testing.T, tokenLifetime time.Duration, extraOAuth string) *env {
	t.Helper()
	return newEnvWith(t, idp.Options{TokenLifetime: tokenLifetime}, extraOAuth)
}

// newEnvWith is newEnv with the provider's options (its audience and
// clients are the tests' own), for one serving HTTPS.
func newEnvWith(t *testing.T, opts idp.Options, extraOAuth string) *env {
	t.Helper()
	opts.Audience, opts.Clients = "kafka", clients
	p := idp.StartTest(t, opts)
	e := &env{t: t, idp: p, log: &logbuf.Buffer{}, audit: kproxytest.NewAuditFile(t)}
	e.cluster = testkit.Cluster(t, 1, kfake.SeedTopics(1, "payments", "events"))
	e.proxy = kproxytest.Start(t, fmt.Sprintf(`
upstream: {bootstrap_servers: [%q], dial_timeout: 5s}
listeners:
  bind_host: 127.0.0.1
  sasl:
    mode: terminate
    mechanisms: [OAUTHBEARER]
    oauthbearer:
      jwks_url: %s
      issuer: %s
      audience: kafka
%s
audit: {output: %q}
`, e.cluster.ListenAddrs()[0], p.JWKSURL(), p.Issuer(), indent(extraOAuth, "      "), e.audit)+testPolicy, kproxytest.WithLog(e.log, zerolog.DebugLevel))
	return e
}

func indent(s, by string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return by + strings.Join(lines, "\n"+by)
}

// fetchToken runs the client-credentials grant against the provider, as a
// Kafka client's OIDC login does.
func fetchToken(ctx context.Context, p *idp.IdP, clientID string) (string, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {"kafka"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.TokenURL(), strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(clientID, clients[clientID].Secret)
	resp, err := p.HTTPClient().Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("token endpoint: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", err
	}
	return body.AccessToken, nil
}

// tokenLogin is franz-go's sasl/oauth fetching a fresh token from the
// provider for every (re-)authentication, counting them.
func tokenLogin(p *idp.IdP, clientID string, logins *atomic.Int64) kgo.Opt {
	return kgo.SASL(oauth.Oauth(func(ctx context.Context) (oauth.Auth, error) {
		tok, err := fetchToken(ctx, p, clientID)
		if logins != nil {
			logins.Add(1)
		}
		return oauth.Auth{Token: tok}, err
	}))
}

// client is a franz-go client of kproxy's.
func (e *env) client(opts ...kgo.Opt) *kgo.Client {
	e.t.Helper()
	return testkit.Client(e.t, append([]kgo.Opt{kgo.SeedBrokers(e.proxy.BootstrapAddr()), kgo.RequestRetries(1), kgo.RetryTimeout(5 * time.Second)}, opts...)...)
}
