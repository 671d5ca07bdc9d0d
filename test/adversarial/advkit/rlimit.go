package advkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kproxy/kproxy/internal/testkit"
)

// StartWithNoFile is Start with the kproxy process's open-files limit
// (RLIMIT_NOFILE, soft and hard) at n, for attacks that exhaust its file
// descriptors. Both limits are set: the Go runtime raises the soft limit
// to the hard one at start. The limit is set by prlimit(1) from
// util-linux (part of every Debian and Ubuntu system); the test is skipped
// where it is missing.
func StartWithNoFile(t testing.TB, cfg string, n int) *testkit.Binary {
	t.Helper()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skipf("prlimit (util-linux) not found: cannot lower kproxy's open-files limit: %v", err)
	}
	// A wrapper the harness runs as if it were kproxy: prlimit execs
	// kproxy in the same process, so the harness's kill and SIGTERM reach
	// kproxy itself.
	wrapper := filepath.Join(t.TempDir(), "kproxy-nofile")
	script := fmt.Sprintf("#!/bin/sh\nexec %q --nofile=%d:%d %q \"$@\"\n", prlimit, n, n, testkit.SharedKproxy(t))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	kp := testkit.RunBinary(t, wrapper, testkit.WriteConfig(t, cfg))
	kp.WaitReady()
	return kp
}
