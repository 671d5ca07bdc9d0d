package config

import (
	"strings"
	"testing"
)

// Every value of the wrong type and every unknown key is reported at once,
// each on its own line with the line number and full key path where it
// is, in the order of the file.
func TestParseReportsEachTypeErrorWithItsKey(t *testing.T) {
	const doc = `upstream:
  bootstrap_servers: {a: 1}
  dial_timeout: 5 parsecs
listeners:
  bind_host: 127.0.0.1
  bootstrap_port: abc
  broker_port_base: [1, 2]
  brokers: [{node_id: x, port: 9201}, {node_id: 2, port: "p"}]
  bogus: 1
limits: {max_in_flight: lots, idle_timeout: 30}
log: [info]
virtual_clusters:
  - name: a
    listeners: {bootstrap_port: zz}
`
	_, err := Parse(strings.NewReader(doc))
	if err == nil {
		t.Fatal("Parse accepted values of the wrong type")
	}
	want := []string{
		`line 2: upstream.bootstrap_servers: cannot use a mapping as a list`,
		`line 3: upstream.dial_timeout: cannot use "5 parsecs" as a duration`,
		`line 6: listeners.bootstrap_port: cannot use "abc" as a number`,
		`line 7: listeners.broker_port_base: cannot use a list as a number`,
		`line 8: listeners.brokers[0].node_id: cannot use "x" as a number`,
		`line 8: listeners.brokers[1].port: cannot use "p" as a number`,
		`line 9: listeners.bogus: unknown key "bogus"`,
		`line 10: limits.max_in_flight: cannot use "lots" as a number`,
		`line 10: limits.idle_timeout: cannot use "30" as a duration`,
		`line 11: log: cannot use a list as a mapping of keys`,
		`line 14: virtual_clusters[0].listeners.bootstrap_port: cannot use "zz" as a number`,
	}
	msg := err.Error()
	at := 0
	for _, w := range want {
		i := strings.Index(msg[at:], w)
		if i < 0 {
			t.Errorf("error does not say %q after what came before:\n%s", w, msg)
			continue
		}
		at += i + len(w)
	}
	if n := strings.Count(msg, "\n  line "); n != len(want) {
		t.Errorf("%d error lines, want %d:\n%s", n, len(want), msg)
	}
	if strings.Contains(msg, "unmarshal") || strings.Contains(msg, "config.") {
		t.Errorf("error still in Go's terms:\n%s", msg)
	}
}

// A value written where a section holding secrets belongs is likely a
// password: the error names the key but never quotes the value.
func TestTypeErrorsDoNotQuoteSecrets(t *testing.T) {
	for _, doc := range []string{
		"upstream:\n  bootstrap_servers: [\"a:1\"]\n  sasl: hunter2\n",
		"upstream:\n  bootstrap_servers: [\"a:1\"]\n  sasl: {mechanism: PLAIN, username: u, password: [hunter2]}\n",
		"upstream: {bootstrap_servers: [\"a:1\"]}\nlisteners:\n  sasl: {users: [hunter2-is-long]}\n",
	} {
		_, err := Parse(strings.NewReader(doc))
		if err == nil {
			t.Fatalf("Parse accepted %q", doc)
		}
		if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "sasl") {
			t.Errorf("error %q: want the key named and the value left out", err)
		}
	}
}

// A YAML syntax error is reported as the parser gives it: with its line.
func TestParseReportsSyntaxErrorLine(t *testing.T) {
	_, err := Parse(strings.NewReader("upstream:\n  bootstrap_servers: [\"a:1\"\nlisteners: {}\n"))
	if err == nil || !strings.Contains(err.Error(), "line ") {
		t.Fatalf("syntax error reported as %v, want its line", err)
	}
}
