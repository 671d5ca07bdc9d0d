package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestValidateWarnsOfClientIDGrants: client ids are chosen by the client,
// so a grant beyond describe to a client_id: principal on listeners
// without authentication is a grant to anyone; validate says so (and still
// accepts the file). With SASL or required client certificates it does not.
func TestValidateWarnsOfClientIDGrants(t *testing.T) {
	const policy = `
policy:
  rules:
    - {name: etl-writes, principals: ["client_id:etl-*"], allow: [write, describe], topics: ["etl.*"]}
    - {name: anyone-looks, principals: ["client_id:*"], allow: [describe], topics: ["*"]}
`
	for _, tt := range []struct {
		name, listeners string
		warn            bool
	}{
		{"plaintext", `listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0}`, true},
		{"tls without client certificates", `listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0, tls: {cert_file: CERT, key_file: KEY}}`, true},
		{"sasl", `listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0, sasl: {mode: passthrough}}`, false},
		{"mtls required", `listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0, tls: {cert_file: CERT, key_file: KEY, client_auth: require, client_ca_file: CERT}}`, false},
	} {
		dir := t.TempDir()
		cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key") // not there: --skip-file-checks
		body := "upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\n" +
			strings.NewReplacer("CERT", cert, "KEY", key).Replace(tt.listeners) + "\n" + policy
		path := testkit.WriteConfig(t, body)
		var stdout, stderr bytes.Buffer
		if code := runArgs([]string{"validate", "--skip-file-checks", "--config", path}, &stdout, &stderr); code != 0 {
			t.Fatalf("%s: validate failed (%d): %s", tt.name, code, stderr.String())
		}
		warned := strings.Contains(stderr.String(), `warning: policy.rules[0]: rule "etl-writes" grants write to client_id:etl-*`)
		if warned != tt.warn {
			t.Errorf("%s: warned %v, want %v; stderr %q", tt.name, warned, tt.warn, stderr.String())
		}
		if strings.Contains(stderr.String(), "anyone-looks") {
			t.Errorf("%s: warned about a describe-only grant: %q", tt.name, stderr.String())
		}
	}
}

// TestValidateWarnsOfClientIDDenies: a deny or governance entry selected
// only by client id is escaped by sending another one, on any listener.
func TestValidateWarnsOfClientIDDenies(t *testing.T) {
	path := testkit.WriteConfig(t, `
upstream: {bootstrap_servers: ["127.0.0.1:9092"]}
listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0, sasl: {mode: passthrough}}
policy:
  default: allow
  rules:
    - {name: no-legacy-deletes, principals: ["client_id:legacy"], deny: [delete], topics: ["*"]}
    - {name: no-user-deletes, principals: ["User:bob", "client_id:legacy"], deny: [delete], topics: ["*"]}
  governance:
    - {name: legacy-acks, principals: ["client_id:legacy"], produce: {required_acks: all}}
`)
	var stdout, stderr bytes.Buffer
	if code := runArgs([]string{"validate", "--config", path}, &stdout, &stderr); code != 0 {
		t.Fatalf("validate failed: %s", stderr.String())
	}
	for _, want := range []string{`policy.rules[0]: rule "no-legacy-deletes" denies only by client id`, `policy.governance[0]: governance "legacy-acks" applies only by client id`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q: %q", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "no-user-deletes") {
		t.Errorf("warned about a deny that also names a user: %q", stderr.String())
	}
}

// TestValidateExamplesWithoutWarnings: the shipped examples teach no grant
// a client can claim. They are written for a server (an audit log under
// /var/log/kproxy), so the files they name are left unread.
func TestValidateExamplesWithoutWarnings(t *testing.T) {
	for _, path := range []string{"../../configs/example.yaml", "../../configs/policy-example.yaml"} {
		var stdout, stderr bytes.Buffer
		if code := runArgs([]string{"validate", "--skip-file-checks", "--config", path}, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q", path, code, stderr.String())
		}
	}
}

// TestValidateWarnsOfMissingAudience: an OAUTHBEARER listener without an
// audience accepts any token of its issuer; validate says so, as run
// logs it, at the top level and in a virtual cluster, and says nothing
// once the audience is set.
func TestValidateWarnsOfMissingAudience(t *testing.T) {
	const sasl = `sasl: {mode: terminate, mechanisms: [OAUTHBEARER], oauthbearer: {jwks_url: "https://idp.example.com/jwks", issuer: "https://idp.example.com"AUDIENCE}}`
	for _, tt := range []struct {
		name, body, want string
	}{
		{"top level", "listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0, SASL}\n",
			"warning: listeners.sasl.oauthbearer.audience is not set"},
		{"virtual cluster", "virtual_clusters:\n  - {name: team-a, topic_prefix: a., group_prefix: a., transactional_id_prefix: a., listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0, SASL}}\n",
			"warning: virtual_clusters[0].listeners.sasl.oauthbearer.audience is not set"},
	} {
		for _, audience := range []string{"", ", audience: kafka"} {
			body := "upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\n" +
				strings.ReplaceAll(tt.body, "SASL", strings.ReplaceAll(sasl, "AUDIENCE", audience))
			path := testkit.WriteConfig(t, body)
			var stdout, stderr bytes.Buffer
			if code := runArgs([]string{"validate", "--config", path}, &stdout, &stderr); code != 0 {
				t.Fatalf("%s: validate failed (%d): %s", tt.name, code, stderr.String())
			}
			if warned := strings.Contains(stderr.String(), tt.want); warned != (audience == "") {
				t.Errorf("%s, audience %q: warned %v; stderr %q", tt.name, audience, warned, stderr.String())
			}
		}
	}
}
