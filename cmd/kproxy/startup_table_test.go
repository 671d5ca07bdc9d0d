package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testpki"
)

// brokenStartup is a configuration an adopter could write that cannot run.
type brokenStartup struct {
	name string
	// body is the configuration without its policy section.
	body string
	// want are the substrings the error must hold: the key (or, for a
	// port in use, the listener) and the cause.
	want []string
	// runOnly: only run can know (a port held by another process), so
	// validate passes.
	runOnly bool
	// file: the problem is in a file the configuration names, which
	// validate --skip-file-checks leaves unread (it passes).
	file bool
}

// TestBrokenConfigurationsExitCleanly starts the real binary with every
// broken configuration an adopter is likely to write, with and without a
// policy (start-up takes another path with one). Each must exit 1 with a
// message naming the key and the cause, never panic, and `kproxy
// validate` must report the same on the same file, except a port in use,
// which only run can find: validate passes, run names the listener and
// the address.
func TestBrokenConfigurationsExitCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testkit.BuildKproxy(t)
	cluster := testkit.Cluster(t, 1) // node 0, for the broker listener
	dir := t.TempDir()
	ca, cert, key, _, _, err := testpki.WriteTestPKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "absent")
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	upstream := fmt.Sprintf("upstream: {bootstrap_servers: [%q]}\n", cluster.ListenAddrs()[0])
	const listeners = "listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0%s}\n"
	plain := fmt.Sprintf(listeners, "")
	withTLS := func(extra string) string {
		return fmt.Sprintf(listeners, fmt.Sprintf(", tls: {cert_file: %q, key_file: %q%s}", cert, key, extra))
	}
	upstreamWith := func(extra string) string {
		return fmt.Sprintf("upstream: {bootstrap_servers: [%q], %s}\n", cluster.ListenAddrs()[0], extra)
	}
	sni := func(port int, certs string) string {
		return fmt.Sprintf("listeners:\n  bind_host: 127.0.0.1\n  bootstrap_port: 0\n  broker_port_base: 0\n"+
			"  sni: {port: %d, bootstrap_host: bootstrap.kafka.test, broker_host_pattern: \"b$(node_id).kafka.test\", %s}\n", port, certs)
	}
	withOAuth := func(oauth string) string {
		return fmt.Sprintf(listeners, fmt.Sprintf(", tls: {cert_file: %q, key_file: %q}, sasl: {mechanisms: [OAUTHBEARER], oauthbearer: {issuer: \"https://idp.example.com/\", audience: kafka, %s}}", cert, key, oauth))
	}
	scram := "mechanism: SCRAM-SHA-512, username: kproxy"
	oauthUpstream := "mechanism: OAUTHBEARER, token_endpoint: \"https://idp.example.com/token\", client_id: kproxy"

	cases := []brokenStartup{
		// A file each kind of key names is missing (or is not what it should be).
		{name: "listener certificate missing", body: upstream + fmt.Sprintf(listeners, fmt.Sprintf(", tls: {cert_file: %q, key_file: %q}", missing, key)),
			file: true, want: []string{"listeners.tls.cert_file", missing}},
		{name: "listener key missing", body: upstream + fmt.Sprintf(listeners, fmt.Sprintf(", tls: {cert_file: %q, key_file: %q}", cert, missing)),
			file: true, want: []string{"listeners.tls.cert_file", missing}},
		{name: "listener key is not PEM", body: upstream + fmt.Sprintf(listeners, fmt.Sprintf(", tls: {cert_file: %q, key_file: %q}", cert, notPEM)),
			file: true, want: []string{"listeners.tls.cert_file", notPEM}},
		{name: "client CA bundle missing", body: upstream + withTLS(fmt.Sprintf(", client_auth: require, client_ca_file: %q", missing)),
			file: true, want: []string{"listeners.tls.client_ca_file", missing}},
		{name: "upstream CA bundle missing", body: upstreamWith(fmt.Sprintf("tls: {ca_file: %q}", missing)) + plain,
			file: true, want: []string{"upstream.tls.ca_file", missing}},
		{name: "upstream CA bundle without a certificate", body: upstreamWith(fmt.Sprintf("tls: {ca_file: %q}", notPEM)) + plain,
			file: true, want: []string{"upstream.tls.ca_file", notPEM}},
		{name: "upstream client certificate missing", body: upstreamWith(fmt.Sprintf("tls: {ca_file: %q, cert_file: %q, key_file: %q}", ca, missing, key)) + plain,
			file: true, want: []string{"upstream.tls.cert_file", missing}},
		{name: "upstream client key missing", body: upstreamWith(fmt.Sprintf("tls: {ca_file: %q, cert_file: %q, key_file: %q}", ca, cert, missing)) + plain,
			file: true, want: []string{"upstream.tls.cert_file", missing}},
		{name: "upstream SCRAM password file missing", body: upstreamWith(fmt.Sprintf("sasl: {%s, password_file: %q}", scram, missing)) + plain,
			file: true, want: []string{"upstream.sasl.password", missing}},
		{name: "upstream PLAIN password file missing", body: upstreamWith(fmt.Sprintf("sasl: {mechanism: PLAIN, username: kproxy, password_file: %q}", missing)) + plain,
			file: true, want: []string{"upstream.sasl.password", missing}},
		{name: "upstream OAuth client secret file missing", body: upstreamWith(fmt.Sprintf("sasl: {%s, client_secret_file: %q}", oauthUpstream, missing)) + plain,
			file: true, want: []string{"upstream.sasl.client_secret", missing}},
		{name: "upstream OAuth token endpoint CA missing", body: upstreamWith(fmt.Sprintf("sasl: {%s, client_secret: s, token_endpoint_ca_file: %q}", oauthUpstream, missing)) + plain,
			file: true, want: []string{"upstream.sasl.token_endpoint_ca_file", missing}},
		{name: "upstream OAuth token endpoint CA without a certificate", body: upstreamWith(fmt.Sprintf("sasl: {%s, client_secret: s, token_endpoint_ca_file: %q}", oauthUpstream, notPEM)) + plain,
			file: true, want: []string{"upstream.sasl.token_endpoint_ca_file", notPEM, "no PEM certificate"}},
		{name: "listener JWKS file missing", body: upstream + withOAuth(fmt.Sprintf("jwks_file: %q", missing)),
			file: true, want: []string{"listeners.sasl.oauthbearer.jwks_file", missing}},
		{name: "listener JWKS CA missing", body: upstream + withOAuth(fmt.Sprintf("jwks_url: \"https://idp.example.com/jwks\", jwks_ca_file: %q", missing)),
			file: true, want: []string{"listeners.sasl.oauthbearer.jwks_ca_file", missing}},
		{name: "listener JWKS CA without a certificate", body: upstream + withOAuth(fmt.Sprintf("jwks_url: \"https://idp.example.com/jwks\", jwks_ca_file: %q", notPEM)),
			file: true, want: []string{"listeners.sasl.oauthbearer.jwks_ca_file", notPEM, "no PEM certificate"}},
		{name: "SNI certificate missing", body: upstream + sni(0, fmt.Sprintf("tls: {cert_file: %q, key_file: %q}", missing, key)),
			file: true, want: []string{"listeners.sni.tls.cert_file", missing}},
		{name: "SNI extra certificate missing", body: upstream + sni(0, fmt.Sprintf("tls: {cert_file: %q, key_file: %q}, certificates: [{cert_file: %q, key_file: %q}]", cert, key, missing, key)),
			file: true, want: []string{"listeners.sni.certificates[0]", missing}},
		{name: "virtual cluster's listener certificate missing", body: upstream + fmt.Sprintf(
			"virtual_clusters:\n  - {name: team-a, topic_prefix: a., group_prefix: a., transactional_id_prefix: a., listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0, tls: {cert_file: %q, key_file: %q}}}\n", missing, key),
			file: true, want: []string{"virtual_clusters[0].listeners.tls.cert_file", missing}},
		{name: "virtual cluster's JWKS CA missing", body: upstream + fmt.Sprintf(
			"virtual_clusters:\n  - {name: team-a, topic_prefix: a., group_prefix: a., transactional_id_prefix: a., listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0, tls: {cert_file: %q, key_file: %q}, sasl: {mechanisms: [OAUTHBEARER], oauthbearer: {jwks_url: \"https://idp.example.com/jwks\", issuer: \"https://idp.example.com/\", audience: kafka, jwks_ca_file: %q}}}}\n", cert, key, missing),
			file: true, want: []string{"virtual_clusters[0].listeners.sasl.oauthbearer.jwks_ca_file", missing}},

		// The audit log cannot be written where it is asked to be.
		{name: "audit output in a directory that does not exist", body: upstream + plain + fmt.Sprintf("audit: {output: %q}\n", filepath.Join(missing, "audit.log")),
			file: true, want: []string{"audit.output", filepath.Join(missing, "audit.log")}},
		{name: "audit output under a file", body: upstream + plain + fmt.Sprintf("audit: {output: %q}\n", filepath.Join(notPEM, "audit.log")),
			file: true, want: []string{"audit.output", filepath.Join(notPEM, "audit.log"), "not a directory"}},

		// YAML that does not decode.
		{name: "YAML syntax error", body: "upstream: {bootstrap_servers: [\"a:1\"]\nlisteners: {bind_host: 127.0.0.1}\n",
			want: []string{"line 1", "did not find expected ',' or '}'"}},
		{name: "tab indentation", body: "upstream:\n\tbootstrap_servers: [\"a:1\"]\n",
			want: []string{"line 2", "tab"}},
		{name: "a string for a number", body: upstream + "listeners:\n  bind_host: 127.0.0.1\n  bootstrap_port: abc\n",
			want: []string{`line 4: listeners.bootstrap_port: cannot use "abc" as a number`}},
		{name: "a list for a mapping", body: upstream + "listeners:\n  - bind_host: 127.0.0.1\n",
			want: []string{"line 3: listeners: cannot use a list as a mapping of keys"}},
		{name: "a mapping for a list", body: "upstream:\n  bootstrap_servers: {a: 1}\n",
			want: []string{"line 2: upstream.bootstrap_servers: cannot use a mapping as a list"}},
		{name: "a bad duration", body: upstreamWith("dial_timeout: 5 parsecs") + plain,
			want: []string{`line 1: upstream.dial_timeout: cannot use "5 parsecs" as a duration`}},
		{name: "a duration without a unit", body: upstream + plain + "limits:\n  idle_timeout: 30\n",
			want: []string{`line 4: limits.idle_timeout: cannot use "30" as a duration`}},
		{name: "unknown key", body: upstream + plain + "limits:\n  max_inflight: 10\n",
			want: []string{`line 4: limits.max_inflight: unknown key "max_inflight"`}},
		{name: "several errors at once", body: upstream +
			"listeners:\n  bind_host: 127.0.0.1\n  bootstrap_port: abc\n  broker_port_base: [1]\n  bogus: 1\nlimits:\n  max_in_flight: lots\n  idle_timeout: 3 days\n",
			want: []string{
				`line 4: listeners.bootstrap_port: cannot use "abc" as a number`,
				`line 5: listeners.broker_port_base: cannot use a list as a number`,
				`line 6: listeners.bogus: unknown key "bogus"`,
				`line 8: limits.max_in_flight: cannot use "lots" as a number`,
				`line 9: limits.idle_timeout: cannot use "3 days" as a duration`,
			}},
		{name: "large_messages unknown key", body: upstream + plain + largeMessages("  parts: 4\n"),
			want: []string{`line 6: large_messages.parts: unknown key "parts"`}},
		{name: "large_messages bad threshold", body: upstream + plain + strings.Replace(largeMessages(""), "threshold_bytes: 1048576", "threshold_bytes: -5", 1),
			want: []string{"large_messages.topics[0].threshold_bytes"}},
		{name: "large_messages without a bucket", body: upstream + plain + strings.Replace(largeMessages(""), "bucket: kafka-large, ", "", 1),
			want: []string{"store.s3.bucket"}},
		{name: "large_messages store at a remote plain-HTTP endpoint", body: upstream + plain + strings.Replace(largeMessages(""), "http://127.0.0.1:8333", "http://s3.example.com", 1),
			want: []string{"store.s3.endpoint"}},
		{name: "encryption unknown part", body: upstream + plain + "encryption:\n  kms: {aws_kms: {endpoint: \"http://127.0.0.1:4599\", region: eu-west-1}}\n  topics: [{match: a, key: alias/k, encrypt: [value, keys]}]\n",
			want: []string{`encryption.topics[0].encrypt: "keys"`}},
		{name: "several validation errors at once", body: upstream + "listeners: {bind_host: 127.0.0.1, bootstrap_port: 70000}\nlog: {level: loud}\n",
			want: []string{"listeners.bootstrap_port", "log.level"}},
	}
	// A port another process holds, for each kind of listener.
	portCases := []struct {
		name string
		body func(port int) string
		// listener is how the message names the listener.
		listener string
	}{
		{"bootstrap port in use", func(p int) string {
			return upstream + fmt.Sprintf("listeners: {bind_host: 127.0.0.1, bootstrap_port: %d, broker_port_base: 0}\n", p)
		}, "listeners.bootstrap_port: bootstrap listener on"},
		{"broker port in use", func(p int) string {
			return upstream + fmt.Sprintf("listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: %d}\n", p)
		}, "listeners.broker_port_base: broker listener for node 0 on"},
		{"broker override port in use", func(p int) string {
			return upstream + fmt.Sprintf("listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0, brokers: [{node_id: 0, port: %d}]}\n", p)
		}, "listeners.brokers[0].port: broker listener for node 0 on"},
		{"SNI port in use", func(p int) string {
			return upstream + sni(p, fmt.Sprintf("tls: {cert_file: %q, key_file: %q}", cert, key))
		}, "listeners.sni.port: SNI listener on"},
		{"admin port in use", func(p int) string {
			return upstream + plain + fmt.Sprintf("admin: {listen: \"127.0.0.1:%d\"}\n", p)
		}, "admin.listen: admin listener on"},
		{"virtual cluster's bootstrap port in use", func(p int) string {
			return upstream + fmt.Sprintf("virtual_clusters:\n  - {name: team-a, topic_prefix: a., group_prefix: a., transactional_id_prefix: a., listeners: {bind_host: 127.0.0.1, bootstrap_port: %d, broker_port_base: 0}}\n", p)
		}, "virtual cluster team-a (virtual_clusters[0]): listeners.bootstrap_port: bootstrap listener on"},
	}
	for _, tc := range cases {
		for _, policy := range []bool{false, true} {
			t.Run(caseName(tc.name, policy), func(t *testing.T) {
				t.Parallel()
				checkBrokenStartup(t, bin, withPolicy(tc.body, policy), tc)
			})
		}
	}
	for _, pc := range portCases {
		for _, policy := range []bool{false, true} {
			t.Run(caseName(pc.name, policy), func(t *testing.T) {
				t.Parallel()
				held, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer held.Close()
				port := held.Addr().(*net.TCPAddr).Port
				checkBrokenStartup(t, bin, withPolicy(pc.body(port), policy), brokenStartup{runOnly: true,
					want: []string{pc.listener, fmt.Sprintf("127.0.0.1:%d", port), "address already in use"}})
			})
		}
	}
}

func caseName(name string, policy bool) string {
	if policy {
		return name + " with a policy"
	}
	return name
}

// withPolicy adds a policy section to body (and an admin endpoint on any
// port, unless body sets one), so that start-up takes the policy's path.
func withPolicy(body string, policy bool) string {
	if !strings.Contains(body, "admin:") {
		body += "admin: {listen: \"127.0.0.1:0\"}\n"
	}
	if policy {
		body += "policy: {default: allow}\n"
	}
	return body
}

// checkBrokenStartup writes body, runs validate and run on it, and checks
// what each says and how each exits.
func checkBrokenStartup(t *testing.T, bin, body string, tc brokenStartup) {
	t.Helper()
	path := testkit.WriteConfig(t, body)
	if tc.file {
		if code, out := runKproxy(t, bin, "validate", "--skip-file-checks", "--config", path); code != 0 {
			t.Errorf("validate --skip-file-checks: exit %d, want 0 (the files are left unread):\n%s", code, out)
		}
	}
	for _, cmd := range []string{"validate", "run"} {
		code, out := runKproxy(t, bin, cmd, "--config", path)
		if strings.Contains(out, "panic:") || strings.Contains(out, "goroutine ") || code == 2 {
			t.Errorf("%s: exit %d with a panic or a usage error:\n%s", cmd, code, out)
			continue
		}
		if cmd == "validate" && tc.runOnly {
			if code != 0 {
				t.Errorf("validate: exit %d, want 0 (only run can find a port in use):\n%s\nconfiguration:\n%s", code, out, body)
			}
			continue
		}
		if code != 1 {
			t.Errorf("%s: exit %d, want 1:\n%s\nconfiguration:\n%s", cmd, code, out, body)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output does not say %q:\n%s\nconfiguration:\n%s", cmd, w, out, body)
			}
		}
	}
}

// runKproxy runs the binary with args and returns its exit code and its
// output (stdout and stderr). A run that has not exited within 20 seconds
// has missed the failure: it is killed, and reported as exit -1.
func runKproxy(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	c := exec.CommandContext(ctx, bin, args...)
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	if ctx.Err() != nil {
		return -1, out.String() + "\n(still running after 20s: killed)"
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), out.String()
	}
	if err != nil {
		t.Fatalf("run kproxy %s: %v", strings.Join(args, " "), err)
	}
	return 0, out.String()
}

// largeMessages is a valid large_messages section, with more (indented
// keys of the section) at its end.
func largeMessages(more string) string {
	return "large_messages:\n" +
		"  store: {s3: {endpoint: \"http://127.0.0.1:8333\", bucket: kafka-large, region: eu-west-1, path_style: true}}\n" +
		"  topics: [{match: \"media.*\", threshold_bytes: 1048576, header_trigger: LFS_BLOB}]\n" + more
}
