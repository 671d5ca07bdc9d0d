package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// caFile writes a test CA's certificate, for the *_ca_file keys (which
// kproxy validate and run read; config.Load does not).
func caFile(t *testing.T) string {
	t.Helper()
	return certs.New(t).CAFile
}

func oauthSecurity(t *testing.T, sasl string) []error {
	t.Helper()
	d, err := decodeSecurity(t, "listeners:\n  sasl:\n"+sasl)
	if err != nil {
		t.Fatal(err)
	}
	s := d.security()
	s.applyDefaults()
	return s.validate()
}

func TestOAuthBearerDefaultsAndIssueExample(t *testing.T) {
	d, err := decodeSecurity(t, `
listeners:
  sasl:
    mode: terminate
    mechanisms: [OAUTHBEARER]
    oauthbearer:
      jwks_url: https://idp.example.com/.well-known/jwks.json
      issuer: https://idp.example.com/
      audience: kafka
`)
	if err != nil {
		t.Fatal(err)
	}
	s := d.security()
	s.applyDefaults()
	if errs := s.validate(); len(errs) > 0 {
		t.Fatalf("the documented example does not validate: %v", errs)
	}
	o := d.Listeners.SASL.OAuthBearer
	if o.PrincipalClaim != "sub" || o.ClockSkew != 30*time.Second || o.JWKSRefreshInterval != time.Hour ||
		o.JWKSTimeout != 5*time.Second || strings.Join(o.AllowedAlgorithms, ",") != strings.Join(auth.DefaultJWTAlgorithms(), ",") {
		t.Fatalf("defaults %+v", o)
	}
}

func TestOAuthBearerValidationNamesKeys(t *testing.T) {
	const good = "      jwks_url: https://idp/jwks\n      issuer: https://idp/\n"
	caGood := caFile(t)
	for _, tc := range []struct{ sasl, want string }{
		{"    mechanisms: [OAUTHBEARER]\n", "listeners.sasl.oauthbearer: required when mechanisms lists OAUTHBEARER"},
		{"    mechanisms: [SCRAM-SHA-512]\n    users: [{name: a, credentials: [x]}]\n    oauthbearer:\n" + good, "listeners.sasl.oauthbearer: set but mechanisms does not list OAUTHBEARER"},
		{"    mode: passthrough\n    mechanisms: [OAUTHBEARER]\n", "listeners.sasl.mechanisms[0]: OAUTHBEARER needs mode terminate"},
		{"    mechanisms: [oauthbearer]\n", `listeners.sasl.mechanisms[0]: "oauthbearer": must be PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER`},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n      issuer: i\n", "listeners.sasl.oauthbearer: set jwks_url"},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n" + good + "      jwks_file: /x\n", "set one of jwks_url and jwks_file"},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n      jwks_url: ftp://idp/jwks\n      issuer: i\n", "listeners.sasl.oauthbearer.jwks_url: \"ftp://idp/jwks\": must be an absolute https://"},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n      jwks_url: https://idp/jwks\n", "listeners.sasl.oauthbearer.issuer: required"},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n" + good + "      allowed_algorithms: [RS256, none]\n", `listeners.sasl.oauthbearer.allowed_algorithms[1]: "none" is never allowed`},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n" + good + "      allowed_algorithms: [HS256]\n", `allowed_algorithms[0]: "HS256" is never allowed`},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n" + good + "      allowed_algorithms: [rs256]\n", `allowed_algorithms[0]: "rs256": must be one of`},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n" + good + "      clock_skew: 1h\n", "listeners.sasl.oauthbearer.clock_skew: 1h0m0s: must be between"},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n" + good + "      required_scopes: [\"a b\"]\n", "listeners.sasl.oauthbearer.required_scopes[0]"},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n" + good + "      required_scopes: [kafka, \"kafka\\u00a0admin\"]\n", "listeners.sasl.oauthbearer.required_scopes[1]: \"kafka\\u00a0admin\": a scope is a non-empty token of printable ASCII"},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n" + good + "      jwks_allowed_redirect_hosts: [keys.idp, \"https://cdn.idp/keys\"]\n",
			`listeners.sasl.oauthbearer.jwks_allowed_redirect_hosts[1]: "https://cdn.idp/keys": must be a host name or IP address, optionally with :port`},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n" + good + "      jwks_allowed_redirect_hosts: [\"\"]\n",
			`listeners.sasl.oauthbearer.jwks_allowed_redirect_hosts[0]: "": must be a host name`},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n      jwks_file: /x\n      issuer: i\n      jwks_allowed_redirect_hosts: [keys.idp]\n",
			"listeners.sasl.oauthbearer.jwks_allowed_redirect_hosts[0]: only with jwks_url"},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n" + good + "      jwks_refresh_interval: 10ms\n", "listeners.sasl.oauthbearer.jwks_refresh_interval: 10ms: must be at least 1s"},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n" + good + "      jwks_timeout: 2m\n", "listeners.sasl.oauthbearer.jwks_timeout: 2m0s: must be positive and at most 1m0s"},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n      jwks_file: /x\n      issuer: i\n      jwks_ca_file: " + caGood + "\n",
			"listeners.sasl.oauthbearer.jwks_ca_file: only with jwks_url (jwks_file is read from disk, not fetched over https); remove it or use jwks_url"},
		{"    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n      jwks_url: http://127.0.0.1:1/jwks\n      issuer: i\n      jwks_ca_file: " + caGood + "\n",
			`listeners.sasl.oauthbearer.jwks_ca_file: only with an https:// jwks_url ("http://127.0.0.1:1/jwks" is plain http, no certificate is verified)`},
	} {
		err := errors.Join(oauthSecurity(t, tc.sasl)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.sasl, err, tc.want)
		}
	}
	// OAUTHBEARER alone needs no users; with SCRAM it still does.
	if errs := oauthSecurity(t, "    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n"+good); len(errs) > 0 {
		t.Fatalf("OAUTHBEARER alone: %v", errs)
	}
	if errs := oauthSecurity(t, "    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n"+good+"      jwks_allowed_redirect_hosts: [keys.idp.example.com, \"cdn.example.com:8443\", 10.0.0.7]\n"); len(errs) > 0 {
		t.Fatalf("jwks_allowed_redirect_hosts naming hosts: %v", errs)
	}
	if errs := oauthSecurity(t, "    mechanisms: [OAUTHBEARER]\n    oauthbearer:\n"+good+"      jwks_ca_file: "+caGood+"\n"); len(errs) > 0 {
		t.Fatalf("jwks_ca_file naming a CA certificate: %v", errs)
	}
	if err := errors.Join(oauthSecurity(t, "    mechanisms: [OAUTHBEARER, SCRAM-SHA-512]\n    oauthbearer:\n"+good)...); err == nil || !strings.Contains(err.Error(), "listeners.sasl.users: required") {
		t.Fatalf("SCRAM without users: %v", err)
	}
}

func TestParseClaimPrincipal(t *testing.T) {
	for _, s := range []string{"Claim:groups=payments", "claim:groups=pay*", "CLAIM:scope=re:^kafka\\."} {
		pm, err := policyconfig.ParsePrincipal(s)
		if err != nil || pm.Kind != policyconfig.PrincipalClaim || pm.Claim == "" {
			t.Errorf("%s: %+v %v", s, pm, err)
		}
	}
	for _, s := range []string{"claim:groups", "claim:=x", "claim:groups=", "claim:g=re:("} {
		if _, err := policyconfig.ParsePrincipal(s); err == nil {
			t.Errorf("%s accepted", s)
		}
	}
}
