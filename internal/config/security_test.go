package config

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kproxy/kproxy/internal/auth"
)

// securityDoc places the security sections where Config will hold them.
type securityDoc struct {
	Listeners struct {
		TLS  *ListenerTLS  `yaml:"tls"`
		SASL *ListenerSASL `yaml:"sasl"`
	} `yaml:"listeners"`
	Upstream struct {
		TLS  *UpstreamTLS  `yaml:"tls"`
		SASL *UpstreamSASL `yaml:"sasl"`
	} `yaml:"upstream"`
	Limits struct {
		ConnectionLimits `yaml:",inline"`
	} `yaml:"limits"`
}

func (d *securityDoc) security() *Security {
	return &Security{
		ListenerTLS: d.Listeners.TLS, ListenerSASL: d.Listeners.SASL,
		UpstreamTLS: d.Upstream.TLS, UpstreamSASL: d.Upstream.SASL,
		Limits: &d.Limits.ConnectionLimits,
	}
}

func decodeSecurity(t *testing.T, text string) (*securityDoc, error) {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	var d securityDoc
	if err := dec.Decode(&d); err != nil {
		return nil, err
	}
	return &d, nil
}

func securityCred(t *testing.T, mech, pw string) string {
	t.Helper()
	c, err := auth.HashPassword(mech, pw, auth.MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fullSecurityYAML(t *testing.T) string {
	return `
listeners:
  tls:
    cert_file: /etc/kproxy/tls.crt
    key_file: /etc/kproxy/tls.key
    client_auth: require
    client_ca_file: /etc/kproxy/clients-ca.crt
    principal_from: san:uri
  sasl:
    mode: terminate
    mechanisms: [SCRAM-SHA-512, SCRAM-SHA-256, PLAIN]
    session_lifetime: 1h
    users:
      - name: alice
        credentials:
          - "` + securityCred(t, auth.ScramSHA256, "a") + `"
          - "` + securityCred(t, auth.ScramSHA512, "a") + `"
      - name: bob
        credentials: ["` + securityCred(t, auth.ScramSHA256, "b") + `"]
upstream:
  tls:
    ca_file: /etc/kproxy/kafka-ca.crt
    server_name: kafka.internal
    cert_file: /etc/kproxy/upstream.crt
    key_file: /etc/kproxy/upstream.key
  sasl:
    mechanism: SCRAM-SHA-512
    username: kproxy
    password_file: /run/secrets/kafka-password
limits:
  handshake_timeout: 5s
  max_connections: 10000
  max_connections_per_ip: 100
`
}

func TestSecurityYAML(t *testing.T) {
	d, err := decodeSecurity(t, fullSecurityYAML(t))
	if err != nil {
		t.Fatal(err)
	}
	s := d.security()
	s.applyDefaults()
	if errs := s.validate(); len(errs) > 0 {
		t.Fatalf("valid file: %v", errors.Join(errs...))
	}
	if s.ListenerSASL.SessionLifetime != time.Hour || len(s.ListenerSASL.Users) != 2 || s.ListenerTLS.PrincipalFrom != "san:uri" ||
		s.UpstreamSASL.PasswordFile != "/run/secrets/kafka-password" || s.Limits.MaxConnectionsPerIP != 100 || s.Limits.HandshakeTimeout != 5*time.Second {
		t.Fatalf("decoded %+v", s)
	}
	// Every credential in the file builds a working store.
	var users []auth.User
	for _, u := range s.ListenerSASL.Users {
		users = append(users, auth.User{Name: u.Name, Credentials: u.Credentials})
	}
	if _, err := auth.NewStore(users); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeSecurity(t, "listeners:\n  tls:\n    cert: x\n"); err == nil || !strings.Contains(err.Error(), "cert") {
		t.Fatalf("unknown key: %v", err)
	}
}

func TestSecurityDefaults(t *testing.T) {
	d, err := decodeSecurity(t, `
listeners:
  tls: {cert_file: c, key_file: k}
  sasl:
    users: [{name: u, credentials: ["`+securityCred(t, auth.ScramSHA512, "p")+`"]}]
`)
	if err != nil {
		t.Fatal(err)
	}
	s := d.security()
	s.applyDefaults()
	if errs := s.validate(); len(errs) > 0 {
		t.Fatal(errors.Join(errs...))
	}
	if s.ListenerTLS.ClientAuth != "none" || s.ListenerSASL.Mode != SASLModeTerminate ||
		strings.Join(s.ListenerSASL.Mechanisms, ",") != "SCRAM-SHA-512,SCRAM-SHA-256" || s.Limits.HandshakeTimeout != DefaultHandshakeTimeout {
		t.Fatalf("defaults: %+v %+v %+v", s.ListenerTLS, s.ListenerSASL, s.Limits)
	}
	// Absent sections stay absent.
	empty := (&securityDoc{}).security()
	empty.applyDefaults()
	if empty.ListenerTLS != nil || empty.ListenerSASL != nil || len(empty.validate()) > 0 {
		t.Fatal("empty security sections")
	}
}

func TestSecurityValidateNamesKeys(t *testing.T) {
	good256 := securityCred(t, auth.ScramSHA256, "p")
	for _, tc := range []struct {
		name, yaml string
		want       []string // each must start one error line
		secret     string   // must not appear in any error
	}{
		{"plaintext credential", `
listeners:
  sasl:
    users:
      - {name: a, credentials: ["` + good256 + `"]}
      - {name: b, credentials: ["hunter2"]}`,
			[]string{"listeners.sasl.users[1].credentials[0]: not a SCRAM credential", "run `kproxy hash-password`"}, "hunter2"},
		{"tls keys", `
listeners:
  tls: {client_auth: maybe, principal_from: ou}`,
			[]string{"listeners.tls.cert_file: required", "listeners.tls.key_file: required", `listeners.tls.client_auth: "maybe"`, `listeners.tls.principal_from: "ou"`}, ""},
		{"ca without client auth", `
listeners:
  tls: {cert_file: c, key_file: k, client_ca_file: ca, principal_from: cn}`,
			[]string{"listeners.tls.client_ca_file: set but client_auth is none", "listeners.tls.principal_from: needs client_auth"}, ""},
		{"require without ca", `
listeners:
  tls: {cert_file: c, key_file: k, client_auth: require}`,
			[]string{"listeners.tls.client_ca_file: required when client_auth is require"}, ""},
		{"sasl keys", `
listeners:
  sasl:
    mode: relay
    mechanisms: [scram-sha-256, PLAIN, PLAIN]
    session_lifetime: 10ms
    users:
      - {name: "", credentials: []}
      - {name: x, credentials: ["` + good256 + `", "` + good256 + `"]}
      - {name: x, credentials: ["` + good256 + `"]}`,
			[]string{`listeners.sasl.mode: "relay"`, `listeners.sasl.mechanisms[0]: "scram-sha-256"`, "listeners.sasl.mechanisms[2]: PLAIN listed twice",
				"listeners.sasl.session_lifetime: 10ms", "listeners.sasl.users[0].name: empty user name", "listeners.sasl.users[0].credentials: required",
				"listeners.sasl.users[1].credentials[1]: a second SCRAM-SHA-256", `listeners.sasl.users[2].name: "x" already defined at users[1]`}, ""},
		{"no user", `
listeners:
  sasl: {mode: terminate}`,
			[]string{"listeners.sasl.users: required in terminate mode"}, ""},
		{"unusable credentials", `
listeners:
  sasl:
    mechanisms: [SCRAM-SHA-512]
    users: [{name: x, credentials: ["` + good256 + `"]}]`,
			[]string{"listeners.sasl.users[0].credentials: none is for an enabled mechanism"}, ""},
		{"passthrough", `
listeners:
  sasl:
    mode: passthrough
    session_lifetime: 1h
    users: [{name: x, credentials: ["` + good256 + `"]}]
upstream:
  sasl: {mechanism: PLAIN, username: k, password: topsecret}`,
			[]string{"listeners.sasl.users: not used in passthrough mode", "listeners.sasl.session_lifetime: not used in passthrough mode", "upstream.sasl: not allowed with listeners.sasl.mode passthrough"}, "topsecret"},
		{"upstream sasl", `
upstream:
  sasl: {mechanism: GSSAPI, password: topsecret, password_env: KAFKA_PW}`,
			[]string{`upstream.sasl.mechanism: "GSSAPI"`, "upstream.sasl.username: empty user name", "upstream.sasl: set exactly one of password, password_file, password_env (2 set)"}, "topsecret"},
		{"upstream sasl no password", `
upstream:
  sasl: {mechanism: SCRAM-SHA-256, username: k}`,
			[]string{"upstream.sasl: set exactly one of password, password_file, password_env (0 set)"}, ""},
		{"upstream tls", `
upstream:
  tls: {cert_file: c, insecure_skip_verify: true, ca_file: ca}`,
			[]string{"upstream.tls: cert_file and key_file go together", "upstream.tls.insecure_skip_verify: true makes ca_file and server_name meaningless"}, ""},
		{"limits", `
limits: {handshake_timeout: -1s, max_connections: 10, max_connections_per_ip: 20}`,
			[]string{"limits.handshake_timeout: -1s", "limits.max_connections_per_ip: 20 exceeds max_connections 10"}, ""},
		{"negative limits", `
limits: {max_connections: -1, max_connections_per_ip: -1}`,
			[]string{"limits.max_connections: -1", "limits.max_connections_per_ip: -1"}, ""},
	} {
		d, err := decodeSecurity(t, tc.yaml)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		s := d.security()
		s.applyDefaults()
		errs := s.validate()
		var all bytes.Buffer
		for _, e := range errs {
			all.WriteString(e.Error() + "\n")
		}
		for _, w := range tc.want {
			if !strings.Contains(all.String(), w) {
				t.Errorf("%s: no error says %q; got:\n%s", tc.name, w, all.String())
			}
		}
		if len(errs) < len(tc.want)-1 {
			t.Errorf("%s: %d errors for %d expectations", tc.name, len(errs), len(tc.want))
		}
		if tc.secret != "" && strings.Contains(all.String(), tc.secret) {
			t.Errorf("%s: errors show the secret:\n%s", tc.name, all.String())
		}
	}
}
