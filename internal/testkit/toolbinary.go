package testkit

import (
	"os"
	"testing"
)

// ToolBinary is the path of a real server a test runs (Jaeger, local-kms,
// SeaweedFS), named by the environment variable env, which .ci/run sets
// once it has built the server. Where env is unset or names no file the
// test is skipped, saying how to build it; in CI (CI set) it fails
// instead, since there the server must be there.
func ToolBinary(t testing.TB, env, how string) string {
	t.Helper()
	bin := os.Getenv(env)
	missing := env + " is not set"
	if bin != "" {
		_, err := os.Stat(bin)
		if err == nil {
			return bin
		}
		missing = err.Error()
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (in CI, which builds it): %s", missing, how)
		return ""
	}
	t.Skipf("%s: %s", missing, how)
	return ""
}
