// Package enforced starts kproxy with its policy enforced, for tests. It
// is apart from testkit because the policy's own tests use testkit.
package enforced

import (
	"io"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/upstreamclient"
	"github.com/kproxy/kproxy/policy"
	"github.com/kproxy/kproxy/proxy"
)

// StartProxy starts kproxy from a whole configuration file's text
// with the file's policy enforced, its audit lines written to audit, and,
// when resolveTopicIDs is set, topic ids it has not seen resolved upstream
// through a client built from the file's upstream section, as cmd/kproxy
// does. It waits until kproxy is ready; everything stops when the test
// ends.
func StartProxy(t testing.TB, yaml string, audit io.Writer, resolveTopicIDs bool) *testkit.Proxy {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(yaml))
	if err != nil {
		t.Fatalf("kproxy config: %v", err)
	}
	opts := []policy.Option{policy.WithAuditWriter(audit), policy.WithRegisterer(prometheus.NewRegistry())}
	if resolveTopicIDs {
		cl, err := upstreamclient.New(cfg.Upstream)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		opts = append(opts, policy.WithTopicResolver(cl))
	}
	enf, err := policy.New(cfg.Policy, cfg.Audit, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { enf.Close() })
	return testkit.StartProxyConfig(t, yaml, proxy.WithFilters(enf))
}
