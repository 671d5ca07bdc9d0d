package proxy_test

import (
	"io"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// TestPolicyAddedByReloadAppliesWithoutRestart: the policy's filter is
// built in a cluster whose file has no policy, so a reload that adds
// quotas enforces them at once, and is not logged as needing a restart.
func TestPolicyAddedByReloadAppliesWithoutRestart(t *testing.T) {
	base := testkit.LocalConfig(testkit.Cluster(t, 1).ListenAddrs()[0])
	kp := kproxytest.Start(t, base, kproxytest.WithLog(io.Discard, zerolog.InfoLevel))
	first := testkit.DialRaw(t, kp.BootstrapAddr(), "added-quota")
	if _, err := first.APIVersions(); err != nil {
		t.Fatal(err)
	}

	kp.Reload(base + "policy:\n  quotas:\n    - {name: added, principals: [\"client_id:added-quota\"], max_connections: 1}\n")
	kp.WaitLog("the quota reload", func(l testkit.LogLine) bool { return strings.HasPrefix(l.Message(), "quotas reloaded") })
	first.APIVersions() // rebinds to the rules in force, and counts
	second := testkit.DialRaw(t, kp.BootstrapAddr(), "added-quota")
	if _, err := second.APIVersions(); err == nil {
		t.Fatal("a second connection was served over the max_connections 1 the reload added")
	}
	for _, l := range kp.Logs.Lines(t) {
		if strings.Contains(testkit.LogLine(l).Message(), "only after a restart") {
			t.Errorf("adding the policy was logged as needing a restart: %v", l)
		}
	}
}
