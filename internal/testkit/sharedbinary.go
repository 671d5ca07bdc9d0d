package testkit

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// sharedBuild is the one kproxy binary of a test process.
type sharedBuild struct {
	once sync.Once
	path string
	err  string
}

var shared sharedBuild // built on first use; read-only after

// SharedKproxy is the path of cmd/kproxy built once for this test process:
// the tests of a package that run the binary share one build.
func SharedKproxy(t testing.TB) string {
	t.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "kproxy-test-")
		if err != nil {
			shared.err = err.Error()
			return
		}
		// A throwaway testing.TB would not do: BuildKproxy fails its
		// caller, so build through the first caller and keep the path.
		shared.path = filepath.Join(dir, "kproxy")
		if out, err := GoBuild(shared.path); err != nil {
			shared.err = err.Error() + "\n" + out
		}
	})
	if shared.err != "" {
		t.Fatalf("build kproxy: %s", shared.err)
	}
	return shared.path
}

// KproxyBinary is SharedKproxy for a test that -short skips, as building
// the binary takes a while. Call it before t.Parallel, so that the build
// is not raced by every parallel test at once.
func KproxyBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	return SharedKproxy(t)
}
