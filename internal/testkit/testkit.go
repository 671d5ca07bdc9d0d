// Package testkit holds the real peers that kproxy's tests drive (a kfake
// cluster, the engine alone, the kproxy binary) and what the tests share:
// the configuration builder, raw protocol connections, metrics and logs.
// A test of kproxy as users run it starts it with kproxytest.Start.
package testkit

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/engine"
)

// Cluster starts a kfake cluster with n brokers (node ids 0..n-1) and
// closes it when the test ends.
func Cluster(t testing.TB, n int, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(n)}, opts...)...)
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// Proxy is an engine StartEngine started, with its metrics and its
// configuration as parsed.
type Proxy struct {
	*engine.Server
	Registry *prometheus.Registry
	Config   *config.Config
}
