package proxy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/proxy"
)

// TestReloadKeepsOverrides: a reload request re-reads the file with the
// overrides kproxy started with. Here the file alone is invalid (its
// bootstrap port is out of range) and only the override makes it valid:
// the reload applies the policy, and no section counts as changed.
func TestReloadKeepsOverrides(t *testing.T) {
	cluster := testkit.Cluster(t, 1)
	file := strings.Replace(testkit.LocalConfig(cluster.ListenAddrs()[0]), "bootstrap_port: 0", "bootstrap_port: 70000", 1)
	kp := serveReloadable(t, file+"policy: {default: deny}\n", proxy.Options{
		Overrides: []proxy.Override{{Key: "listeners.bootstrap_port", Value: "0", Source: "TEST_BOOTSTRAP_PORT"}},
	})
	kp.signalReload()
	l := kp.WaitLog("the reload's outcome", func(l testkit.LogLine) bool {
		m := l.Message()
		return m == "policy reloaded; applies to the next request on every connection" ||
			strings.HasPrefix(m, "configuration reload rejected") || strings.HasPrefix(m, "configuration section changed")
	})
	if !strings.HasPrefix(l.Message(), "policy reloaded") || l["trigger"] != "sighup" {
		t.Errorf("reload logged %v", l)
	}
	if _, err := kp.Stop(); err != nil {
		t.Errorf("Run returned %v", err)
	}
}

// TestRunRefusesInvalidConfiguration: Run and Validate report every
// problem, naming keys and the overrides' sources, and serve nothing.
func TestRunRefusesInvalidConfiguration(t *testing.T) {
	path := testkit.WriteConfig(t, "upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\nlog: {level: loud}\n")
	opts := proxy.Options{ConfigPath: path, Overrides: []proxy.Override{{Key: "listeners.broker_port_base", Value: "-1", Source: "TEST_BASE"}}}
	for name, err := range map[string]error{
		"Run":      proxy.Run(context.Background(), opts),
		"Validate": func() error { _, err := proxy.Validate(opts); return err }(),
	} {
		if err == nil || !strings.Contains(err.Error(), `log.level: "loud"`) || !strings.Contains(err.Error(), "listeners.broker_port_base (set by TEST_BASE): -1") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
