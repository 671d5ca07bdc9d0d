package proxy_test

import (
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/proxy"
)

func get(t *testing.T, url string) string {
	t.Helper()
	_, body := testkit.HTTPGet(t, url)
	return body
}

// TestBuildInfoAndConfigReloadMetrics: kproxy_build_info carries the
// version and commit Options passes; a reload that applies and one that
// is rejected are counted by result; kproxy_config_info names the hash of
// the configuration in force, and /config serves the reloaded policy.
func TestBuildInfoAndConfigReloadMetrics(t *testing.T) {
	cluster := testkit.Cluster(t, 1)
	base := testkit.LocalConfig(cluster.ListenAddrs()[0])
	kp := serveReloadable(t, base+"policy: {default: allow}\n", proxy.Options{Version: "v9.9.9", Commit: "abc123"})
	metrics := func() string { return get(t, "http://"+kp.Admin+"/metrics") }
	if m := metrics(); !strings.Contains(m, `kproxy_build_info{commit="abc123",go_version="go`) || !strings.Contains(m, `version="v9.9.9"} 1`) {
		t.Errorf("no kproxy_build_info for v9.9.9/abc123 in:\n%s", grepLines(m, "kproxy_build_info"))
	}
	hashBefore := grepLines(metrics(), "kproxy_config_info{")

	kp.reloadWith(base + "policy: {default: deny}\n")
	kp.WaitLog("the reload applied", func(l testkit.LogLine) bool { return strings.HasPrefix(l.Message(), "policy reloaded") })
	kp.reloadWith(base + "policy: {default: maybe}\n")
	kp.WaitLog("the reload rejected", func(l testkit.LogLine) bool { return strings.HasPrefix(l.Message(), "configuration reload rejected") })

	m := metrics()
	for _, want := range []string{`kproxy_config_reloads_total{result="success"} 1`, `kproxy_config_reloads_total{result="failure"} 1`, "kproxy_config_loaded_timestamp_seconds "} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(m, "kproxy_config"))
		}
	}
	if hashAfter := grepLines(m, "kproxy_config_info{"); hashAfter == hashBefore || strings.Count(hashAfter, "\n") != 1 {
		t.Errorf("kproxy_config_info before the reload %q, after %q: want one series with a new hash", hashBefore, hashAfter)
	}
	if cfg := get(t, "http://"+kp.Admin+"/config"); !strings.Contains(cfg, "default: deny") {
		t.Errorf("/config does not serve the reloaded policy:\n%s", cfg)
	}
	if _, err := kp.Stop(); err != nil {
		t.Errorf("Run returned %v", err)
	}
}

func grepLines(text, prefix string) string {
	var out strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out.WriteString(l + "\n")
		}
	}
	return out.String()
}
