package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/idp"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// The oauth scenario: every client authenticates to kproxy over TLS with
// SASL/OAUTHBEARER, using a token it got from the test identity provider
// (internal/testkit/idp, served by the test process on loopback) for its
// client credentials, and kproxy validates it against the provider's JWKS.
// The policy names the token's subject: it may write and read the topics
// of suffix oauthAllowed and only describe those of suffix oauthDenied, and
// everything else is denied. Each cell round-trips records through an
// allowed topic and must be refused (TOPIC_AUTHORIZATION_FAILED) when it
// produces to a denied one.
const (
	oauthAudience = "kafka"
	oauthScope    = "kafka"
	// The client every cell authenticates as, and the subject its tokens
	// carry: the principal User:svc-conformance.
	oauthClientID = "conformance"
	oauthSecret   = "conformance-secret"
	oauthSubject  = "svc-conformance"
	// A second client whose principal the policy grants nothing.
	oauthOtherID     = "other"
	oauthOtherSecret = "other-secret"
	oauthOtherSub    = "svc-other"
	// Topic suffixes (see name) the policy allows and denies.
	oauthAllowed = "allowed"
	oauthDenied  = "denied"
	// oauthRecords is how many records each oauth cell round-trips.
	oauthRecords = 1000
)

// startOAuth starts e's identity provider and the kproxy that terminates
// OAUTHBEARER with its tokens (e.oauth).
func (e *env) startOAuth(t *testing.T) {
	t.Helper()
	p := idp.StartTest(t, idp.Options{
		Audience:      oauthAudience,
		TokenLifetime: 10 * time.Minute,
		Clients: map[string]idp.Client{
			oauthClientID: {Secret: oauthSecret, Subject: oauthSubject},
			oauthOtherID:  {Secret: oauthOtherSecret, Subject: oauthOtherSub},
		},
	})
	e.idp = p
	yaml := oauthYAML(e.pki, p, e.upstream)
	// The scenario's policy is in the file; its audit lines are not checked.
	yaml += fmt.Sprintf("audit: {output: %q}\n", kproxytest.NewAuditFile(t))
	e.oauth = kproxytest.Start(t, yaml)
}

// oauthYAML: kproxy terminates TLS and OAUTHBEARER (tokens of p for the
// audience, with the scope every client asks for; principal from sub) and
// enforces the scenario's policy. Topic and group globs match
// the names of every client's oauth cell (see name).
func oauthYAML(pki certs.Files, p *idp.IdP, upstream []string) string {
	topic := func(suffix string) string { return fmt.Sprintf("conf-*-oauth-%s-*", suffix) }
	return tlsListenerYAML(pki, upstream, "") + fmt.Sprintf(`  sasl:
    mode: terminate
    mechanisms: [OAUTHBEARER]
    oauthbearer:
      jwks_url: %q
      issuer: %q
      audience: %s
      principal_claim: sub
      required_scopes: [%s]
      clock_skew: 30s
policy:
  default: deny
  rules:
    - {name: oauth-allowed, principals: ["User:%s"], allow: [all], topics: [%q], groups: ["conf-*-oauth-*"]}
    - {name: oauth-describe-only, principals: ["User:%s"], allow: [describe], topics: [%q]}
log: {level: warn}
`, p.JWKSURL(), p.Issuer(), oauthAudience, oauthScope,
		oauthSubject, topic(oauthAllowed), oauthSubject, topic(oauthDenied))
}

// oauthTopics creates the cell's allowed and denied topics (through the
// plaintext kproxy, which has no policy).
func (e *env) oauthTopics(t *testing.T, c *cellCtx) (allowed, denied string) {
	t.Helper()
	return e.newTopic(t, c, oauthAllowed, partitions), e.newTopic(t, c, oauthDenied, 1)
}

// oauthTokens gets access tokens for one client with the
// client-credentials grant (client_secret_basic), as an application using
// franz-go or sarama would, and reuses each until a minute before it
// expires (sarama asks a provider to: every connection asks for one).
type oauthTokens struct {
	p          *idp.IdP
	id, secret string

	mu      sync.Mutex
	token   string
	renewAt time.Time
}

func (s *oauthTokens) get(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && time.Now().Before(s.renewAt) {
		return s.token, nil
	}
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {oauthScope}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.p.TokenURL(), strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(s.id), url.QueryEscape(s.secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("token request: %w", err)
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", fmt.Errorf("token response (HTTP %d): %w", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK || body.AccessToken == "" {
		return "", fmt.Errorf("token endpoint answered HTTP %d %q", resp.StatusCode, body.Error)
	}
	s.token, s.renewAt = body.AccessToken, time.Now().Add(time.Duration(body.ExpiresIn-60)*time.Second)
	return s.token, nil
}

// Token is sarama's AccessTokenProvider.
func (s *oauthTokens) Token() (*sarama.AccessToken, error) {
	ctx, cancel := ctxTimeout(10 * time.Second)
	defer cancel()
	tok, err := s.get(ctx)
	if err != nil {
		return nil, err
	}
	return &sarama.AccessToken{Token: tok}, nil
}

// mechanism is franz-go's OAUTHBEARER client with these tokens.
func (s *oauthTokens) mechanism() sasl.Mechanism {
	return oauth.Oauth(func(ctx context.Context) (oauth.Auth, error) {
		tok, err := s.get(ctx)
		return oauth.Auth{Token: tok}, err
	})
}

// tokens is the token source of the scenario's client.
func (e *env) tokens() *oauthTokens {
	return &oauthTokens{p: e.idp, id: oauthClientID, secret: oauthSecret}
}

// idpAddr is the identity provider's host:port: the one address besides
// kproxy's that a client of e.oauth may connect to.
func (e *env) idpAddr() string {
	u, _ := url.Parse(e.idp.URL())
	return u.Host
}
