package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// TestShutdownStopsDiscovery: once kproxy has shut down (proxy.Run has
// returned), kproxy does nothing more: in particular its
// start-up discovery of an unreachable upstream has stopped and no longer
// logs. (A goroutine that outlives Shutdown also makes any test that logs
// through testing.T panic with "Log in goroutine after Test has completed".)
func TestShutdownStopsDiscovery(t *testing.T) {
	t.Parallel()
	logs := &logbuf.Buffer{}
	kp := kproxytest.Start(t, `
upstream: {bootstrap_servers: ["`+blackhole(t)+`"], dial_timeout: 1s}
listeners: {bind_host: 127.0.0.1, bootstrap_port: 0}
log: {level: warn}
`, kproxytest.WithLog(logs, zerolog.WarnLevel), kproxytest.Unready())
	time.Sleep(300 * time.Millisecond) // discovery is now blocked dialing
	if err := kp.Stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	after := len(logs.Bytes())
	time.Sleep(1500 * time.Millisecond)
	for _, l := range strings.SplitAfter(string(logs.Bytes()[after:]), "\n") {
		if l != "" {
			t.Errorf("logged after Shutdown returned: %s", strings.TrimSpace(l))
		}
	}
}
