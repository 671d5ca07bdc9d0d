package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// RunHAProxy runs the haproxy binary on the configuration text cfg, in
// the foreground mode (-db), until the test ends, and returns its log. The
// log is shown if the test failed.
func RunHAProxy(t testing.TB, haproxy, cfg string) *logbuf.Buffer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	log := &logbuf.Buffer{}
	hp := exec.Command(haproxy, "-db", "-f", path)
	hp.Stdout, hp.Stderr = log, log
	if err := hp.Start(); err != nil {
		t.Fatalf("start haproxy: %v", err)
	}
	t.Cleanup(func() {
		hp.Process.Kill()
		hp.Wait()
		if t.Failed() {
			t.Logf("haproxy log:\n%s", log.String())
		}
	})
	return log
}

// WaitFor polls cond every 20ms until it holds (true) or d passes (false).
func WaitFor(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); ; {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
