package kproxytest

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/engine"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
	"github.com/kproxy/kproxy/policy"
)

// StartUnresolving starts the engine alone (testkit.StartEngine) from yaml
// with the file's policy plugged in by hand, its audit discarded, and
// without the topic id resolver proxy.Run wires: a replica to which a
// topic id it has not seen is really unknown, the control of tests that
// show replicas resolving ids. kproxy itself never runs so when it can
// reach the cluster.
func StartUnresolving(t testing.TB, yaml string) *testkit.Proxy {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(yaml))
	if err != nil {
		t.Fatal(err)
	}
	enf, err := policy.New(cfg.Policy, cfg.Audit, policy.WithAuditWriter(&logbuf.Buffer{}), policy.WithRegisterer(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { enf.Close() })
	return testkit.StartEngine(t, testkit.Engine{YAML: yaml, Options: []engine.Option{engine.WithFilters(enf)}})
}
