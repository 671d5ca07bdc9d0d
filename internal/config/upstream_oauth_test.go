package config

import (
	"strings"
	"testing"
	"time"
)

func validateUpstreamSASL(t *testing.T, text string) (*UpstreamSASL, string) {
	t.Helper()
	d, err := decodeSecurity(t, text)
	if err != nil {
		t.Fatal(err)
	}
	s := d.security()
	s.applyDefaults()
	var all strings.Builder
	for _, e := range s.validate() {
		all.WriteString(e.Error() + "\n")
	}
	return s.UpstreamSASL, all.String()
}

func TestUpstreamOAuthValid(t *testing.T) {
	caGood := caFile(t)
	for _, endpoint := range []string{"https://idp.example.com/oauth2/token", "http://127.0.0.1:8080/token", "http://localhost/token", "http://[::1]:9/t"} {
		u, errs := validateUpstreamSASL(t, `
upstream:
  sasl:
    mechanism: OAUTHBEARER
    token_endpoint: `+endpoint+`
    client_id: kproxy
    client_secret_file: /run/secrets/kproxy-oauth
    scope: kafka kafka.write
    token_timeout: 3s
`+caKey(endpoint, caGood))
		if errs != "" {
			t.Fatalf("%s: %s", endpoint, errs)
		}
		if !u.OAuth() || u.ClientID != "kproxy" || u.Scope != "kafka kafka.write" || u.TokenTimeout != 3*time.Second ||
			(strings.HasPrefix(endpoint, "https:") && u.TokenEndpointCAFile != caGood) {
			t.Fatalf("decoded %+v", u)
		}
	}
}

// caKey is a token_endpoint_ca_file line for an https endpoint, which
// alone can use one.
func caKey(endpoint, caFile string) string {
	if !strings.HasPrefix(endpoint, "https:") {
		return ""
	}
	return "    token_endpoint_ca_file: " + caFile + "\n"
}

func TestUpstreamOAuthValidateNamesKeys(t *testing.T) {
	caGood := caFile(t)
	for _, tc := range []struct {
		name, yaml string
		want       []string
		secret     string
	}{
		{"nothing set", `
upstream:
  sasl: {mechanism: OAUTHBEARER}`,
			[]string{"upstream.sasl.token_endpoint: required", "upstream.sasl.client_id: required",
				"upstream.sasl: set exactly one of client_secret, client_secret_file, client_secret_env (0 set)"}, ""},
		{"password keys and two secrets", `
upstream:
  sasl: {mechanism: OAUTHBEARER, token_endpoint: "https://i/t", client_id: k, username: u, password: hunter2, client_secret: s3cr3t-value, client_secret_env: KPROXY_SECRET}`,
			[]string{"upstream.sasl.username: not used with mechanism OAUTHBEARER", "upstream.sasl.password: not used",
				"upstream.sasl: set exactly one of client_secret, client_secret_file, client_secret_env (2 set)"}, "s3cr3t-value"},
		{"cleartext endpoint", `
upstream:
  sasl: {mechanism: OAUTHBEARER, token_endpoint: "http://idp.example.com/token", client_id: k, client_secret_env: X}`,
			[]string{"upstream.sasl.token_endpoint: \"http://idp.example.com/token\": http sends the client secret in the clear"}, ""},
		{"relative endpoint", `
upstream:
  sasl: {mechanism: OAUTHBEARER, token_endpoint: "/token", client_id: k, client_secret_env: X}`,
			[]string{"upstream.sasl.token_endpoint: \"/token\": must be an absolute https:// URL"}, ""},
		{"credentials in the endpoint", `
upstream:
  sasl: {mechanism: OAUTHBEARER, token_endpoint: "https://k:pw@idp/token", client_id: k, client_secret_env: X}`,
			[]string{"upstream.sasl.token_endpoint: \"https://k:pw@idp/token\": credentials in the URL are not allowed"}, ""},
		{"other scheme", `
upstream:
  sasl: {mechanism: OAUTHBEARER, token_endpoint: "ftp://idp/token", client_id: k, client_secret_env: X}`,
			[]string{"upstream.sasl.token_endpoint: \"ftp://idp/token\": scheme must be https"}, ""},
		{"bad scope and timeout", `
upstream:
  sasl: {mechanism: OAUTHBEARER, token_endpoint: "https://i/t", client_id: k, client_secret_env: X, scope: "a\"b", token_timeout: -1s}`,
			[]string{"upstream.sasl.scope: ", "upstream.sasl.token_timeout: -1s: must be positive"}, ""},
		{"scope separated by a no-break space", `
upstream:
  sasl: {mechanism: OAUTHBEARER, token_endpoint: "https://i/t", client_id: k, client_secret_env: X, scope: "kafka\u00a0admin"}`,
			[]string{"upstream.sasl.scope: \"kafka\\u00a0admin\": scopes are separated by single spaces"}, ""},
		{"oauth keys with SCRAM", `
upstream:
  sasl: {mechanism: SCRAM-SHA-512, username: u, password_env: P, token_endpoint: "https://i/t", client_id: k, client_secret: s3cr3t-value, scope: kafka, token_timeout: 1s}`,
			[]string{`upstream.sasl.token_endpoint: only for mechanism OAUTHBEARER (mechanism is "SCRAM-SHA-512")`, "upstream.sasl.client_id: only for",
				"upstream.sasl.client_secret: only for", "upstream.sasl.scope: only for", "upstream.sasl.token_timeout: only for"}, "s3cr3t-value"},
		{"CA file with a plain http endpoint", `
upstream:
  sasl: {mechanism: OAUTHBEARER, token_endpoint: "http://127.0.0.1:1/t", client_id: k, client_secret_env: X, token_endpoint_ca_file: ` + caGood + `}`,
			[]string{`upstream.sasl.token_endpoint_ca_file: only with an https:// token_endpoint ("http://127.0.0.1:1/t" is plain http, no certificate is verified)`}, ""},
		{"CA file with SCRAM", `
upstream:
  sasl: {mechanism: SCRAM-SHA-512, username: u, password_env: P, token_endpoint_ca_file: ` + caGood + `}`,
			[]string{`upstream.sasl.token_endpoint_ca_file: only for mechanism OAUTHBEARER (mechanism is "SCRAM-SHA-512")`}, ""},
		{"lower-case mechanism", `
upstream:
  sasl: {mechanism: oauthbearer, token_endpoint: "https://i/t", client_id: k, client_secret_env: X}`,
			[]string{`upstream.sasl.mechanism: "oauthbearer": must be PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER`}, ""},
	} {
		_, all := validateUpstreamSASL(t, tc.yaml)
		for _, w := range tc.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: no error says %q; got:\n%s", tc.name, w, all)
			}
		}
		if tc.secret != "" && strings.Contains(all, tc.secret) {
			t.Errorf("%s: errors show the secret:\n%s", tc.name, all)
		}
	}
}

func TestRedactedHidesClientSecret(t *testing.T) {
	c := &Config{Upstream: Upstream{SASL: &UpstreamSASL{Mechanism: "OAUTHBEARER", ClientID: "k", ClientSecret: "s3cr3t-value"}}}
	r := c.Redacted()
	if r.Upstream.SASL.ClientSecret != RedactedValue || c.Upstream.SASL.ClientSecret != "s3cr3t-value" {
		t.Fatalf("redacted %q, original %q", r.Upstream.SASL.ClientSecret, c.Upstream.SASL.ClientSecret)
	}
}
