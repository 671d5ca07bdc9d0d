package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/testkit"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	return testkit.WriteConfig(t, "upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\n"+body)
}

const cliPolicy = `policy:
  rules:
    - {name: writers, principals: ["User:alice"], allow: [write], topics: ["orders*"]}
    - {name: no-secrets, principals: ["*"], deny: [all], topics: ["orders.secret"]}
`

// TestPolicyExplainCommand: explain exits 0 on either decision and prints
// it with the deciding rule; --output json carries the same; a bad file
// exits 1 and bad usage 2, each saying what is wrong.
func TestPolicyExplainCommand(t *testing.T) {
	path := writeConfig(t, cliPolicy)
	for _, tc := range []struct {
		args  []string
		first string
	}{
		{[]string{"--principal", "User:alice", "--operation", "write", "--topic", "orders.eu"}, "ALLOW  User:alice  WRITE  topic orders.eu"},
		{[]string{"--principal", "User:alice", "--operation", "write", "--topic", "orders.secret"}, "DENY  User:alice  WRITE  topic orders.secret"},
		{[]string{"--principal", "User:bob", "--operation", "read", "--group", "g1"}, "DENY  User:bob  READ  group g1"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"policy", "explain", "--config", path}, tc.args...)
		if code := runArgs(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%q: exit %d, stderr %s", args, code, stderr.String())
		}
		if first, _, _ := strings.Cut(stdout.String(), "\n"); first != tc.first {
			t.Errorf("%q: first line %q, want %q", args, first, tc.first)
		}
	}

	var stdout, stderr bytes.Buffer
	args := []string{"policy", "explain", "--config", path, "--principal", "User:alice", "--operation", "write", "--topic", "orders.secret", "--output", "json"}
	if code := runArgs(args, &stdout, &stderr); code != 0 {
		t.Fatalf("json: exit %d, stderr %s", code, stderr.String())
	}
	var x struct {
		Decision  string
		DecidedBy string `json:"decided_by"`
		Rules     []struct{ Key, Outcome, Reason string }
	}
	if err := json.Unmarshal(stdout.Bytes(), &x); err != nil {
		t.Fatalf("json: %v\n%s", err, stdout.String())
	}
	if x.Decision != "DENY" || x.DecidedBy != "policy.rules[1]" || len(x.Rules) != 2 || x.Rules[0].Outcome != "matched" {
		t.Errorf("json: %+v; want decided by policy.rules[1], rules[0] matched but lost", x)
	}

	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--config", writeConfig(t, "policy: {rules: [{name: x, allow: [fly]}]}\n"), "--principal", "User:a", "--operation", "read", "--topic", "t"}, 1, "fly"},
		{[]string{"--config", path, "--principal", "alice", "--operation", "read", "--topic", "t"}, 2, `principal "alice": write User:NAME`},
		{[]string{"--config", path, "--principal", "User:a", "--operation", "fly", "--topic", "t"}, 2, `operation "fly": valid: read, write`},
		{[]string{"--config", path, "--principal", "User:a", "--operation", "read", "--topic", "t", "--group", "g"}, 2, "name exactly one of topic"},
		{[]string{"--config", path, "--principal", "User:a", "--operation", "write", "--group", "g"}, 2, "write does not apply to a group"},
		{[]string{"--config", path, "--principal", "User:a", "--operation", "read", "--topic", "t", "--virtual-cluster", "x"}, 2, "the file has no virtual_clusters"},
		{[]string{"--config", path, "--principal", "User:a", "--operation", "read", "--topic", "t", "--output", "yaml"}, 2, "--output text or json"},
		{[]string{"--principal", "User:a", "--operation", "read", "--topic", "t"}, 2, "want --config FILE"},
	} {
		var stdout, stderr bytes.Buffer
		if code := runArgs(append([]string{"policy", "explain"}, tc.args...), &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.says) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d saying %q", tc.args, code, stderr.String(), tc.code, tc.says)
		}
	}
}

// TestPolicyExplainVirtualCluster: with virtual clusters, explain uses the
// named cluster's policy, an inherited one under the top level's key.
func TestPolicyExplainVirtualCluster(t *testing.T) {
	path := writeConfig(t, cliPolicy+`virtual_clusters:
  - {name: a, listeners: {bootstrap_port: 19092, broker_port_base: 19100}, topic_prefix: a., group_prefix: a., transactional_id_prefix: a.}
  - name: b
    listeners: {bootstrap_port: 19192, broker_port_base: 19200}
    topic_prefix: b.
    group_prefix: b.
    transactional_id_prefix: b.
    policy: {rules: [{name: b-writers, principals: ["VirtualCluster:b"], allow: [write], topics: ["*"]}]}
`)
	for _, tc := range []struct {
		vc, says string
	}{
		{"a", "decided by policy.rules[0] (line 4):"},
		{"b", "decided by virtual_clusters[1].policy.rules[0] (line 13):"},
	} {
		var stdout, stderr bytes.Buffer
		args := []string{"policy", "explain", "--config", path, "--virtual-cluster", tc.vc, "--principal", "User:alice", "--operation", "write", "--topic", "orders"}
		if code := runArgs(args, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), tc.says) {
			t.Errorf("%s: exit %d, stdout %s stderr %s; want %q", tc.vc, code, stdout.String(), stderr.String(), tc.says)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := runArgs([]string{"policy", "explain", "--config", path, "--principal", "User:alice", "--operation", "write", "--topic", "orders"}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "name one of a, b") {
		t.Errorf("no --virtual-cluster: exit %d, stderr %q; want 2 naming a, b", code, stderr.String())
	}
}

// TestPolicyDiffCommand: diff prints each access gained and lost, "no
// change in access" for equal policies, and per virtual cluster.
func TestPolicyDiffCommand(t *testing.T) {
	before := writeConfig(t, cliPolicy)
	after := writeConfig(t, strings.Replace(cliPolicy, `allow: [write], topics: ["orders*"]`, `allow: [write], topics: ["orders.eu"]`, 1))
	var stdout, stderr bytes.Buffer
	if code := runArgs([]string{"policy", "diff", before, before}, &stdout, &stderr); code != 0 || stdout.String() != "no change in access\n" {
		t.Errorf("same file: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	if code := runArgs([]string{"policy", "diff", before, after}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	want := "- User:alice  WRITE  topic orders*\n- User:alice  DESCRIBE  topic orders*\n0 gained, 2 lost, 0 governance and 0 quota changes\n"
	if stdout.String() != want {
		t.Errorf("diff:\n%s\nwant\n%s", stdout.String(), want)
	}

	vcs := func(bRule string) string {
		return "virtual_clusters:\n  - {name: a, listeners: {bootstrap_port: 19092, broker_port_base: 19100}, topic_prefix: a., group_prefix: a., transactional_id_prefix: a.}\n" +
			"  - {name: b, listeners: {bootstrap_port: 19192, broker_port_base: 19200}, topic_prefix: b., group_prefix: b., transactional_id_prefix: b., policy: {rules: [" + bRule + "]}}\n"
	}
	before = writeConfig(t, cliPolicy+vcs(`{name: r, principals: ["User:carol"], allow: [read], groups: ["g"]}`))
	after = writeConfig(t, cliPolicy+vcs(`{name: r, principals: ["User:carol"], allow: [read, delete], groups: ["g"]}`))
	stdout.Reset()
	if code := runArgs([]string{"policy", "diff", before, after}, &stdout, &stderr); code != 0 {
		t.Fatalf("virtual clusters: exit %d, stderr %s", code, stderr.String())
	}
	want = "virtual cluster a:\nno change in access\nvirtual cluster b:\n+ User:carol  DELETE  group g\n1 gained, 0 lost, 0 governance and 0 quota changes\n"
	if stdout.String() != want {
		t.Errorf("virtual clusters:\n%s\nwant\n%s", stdout.String(), want)
	}

	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{before}, 2, "want two configuration files"},
		{[]string{before, filepath.Join(t.TempDir(), "missing.yaml")}, 1, "missing.yaml"},
	} {
		var stdout, stderr bytes.Buffer
		if code := runArgs(append([]string{"policy", "diff"}, tc.args...), &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.says) {
			t.Errorf("%q: exit %d, stderr %q; want %d saying %q", tc.args, code, stderr.String(), tc.code, tc.says)
		}
	}
}

// TestPolicyCommandsBinary runs the built kproxy binary's policy explain
// and diff as a shell or a CI job would, checking the exit codes a script
// relies on: 0 on either decision and on any diff, 1 for a file that does
// not load, 2 for bad usage.
func TestPolicyCommandsBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testkit.BuildKproxy(t)
	path := writeConfig(t, cliPolicy)
	broken := writeConfig(t, "policy: {default: maybe}\n")
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string
	}{
		{[]string{"policy", "explain", "--config", path, "--principal", "User:alice", "--operation", "write", "--topic", "orders"}, 0, "ALLOW  User:alice  WRITE  topic orders\n"},
		{[]string{"policy", "explain", "--config", path, "--principal", "User:bob", "--operation", "write", "--topic", "orders"}, 0, "DENY  User:bob  WRITE  topic orders\n"},
		{[]string{"policy", "explain", "--config", broken, "--principal", "User:bob", "--operation", "write", "--topic", "orders"}, 1, ""},
		{[]string{"policy", "explain", "--config", path, "--principal", "User:bob", "--operation", "write"}, 2, ""},
		{[]string{"policy", "diff", path, path}, 0, "no change in access\n"},
		{[]string{"policy", "diff", path, broken}, 1, ""},
		{[]string{"policy", "diff", path}, 2, ""},
		{[]string{"policy"}, 2, ""},
		{[]string{"policy", "lint"}, 2, ""},
	} {
		cmd := exec.Command(bin, tc.args...)
		out, err := cmd.Output()
		code := 0
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(out), "\n")
		if code != tc.code || (tc.stdout != "" && first+"\n" != tc.stdout) {
			t.Errorf("kproxy %s: exit %d, stdout %q; want exit %d, %q", strings.Join(tc.args, " "), code, out, tc.code, tc.stdout)
		}
	}
}

// TestPolicyWithoutSubcommand: kproxy policy alone, or with an unknown
// word, is bad usage that names the policy commands.
func TestPolicyWithoutSubcommand(t *testing.T) {
	for _, args := range [][]string{{"policy"}, {"policy", "lint"}} {
		var stdout, stderr bytes.Buffer
		if code := runArgs(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "kproxy policy: name one of its commands: explain, diff") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}
