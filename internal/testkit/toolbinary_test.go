package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// outcome records whether ToolBinary skipped or failed the test.
type outcome struct {
	testing.TB
	skipped, failed string
}

func (o *outcome) Skipf(format string, args ...any)  { o.skipped = fmt.Sprintf(format, args...) }
func (o *outcome) Fatalf(format string, args ...any) { o.failed = fmt.Sprintf(format, args...) }

// A missing server skips a test on a developer's machine and fails it in
// CI, where .ci/run must have built it; a server that is there is used.
func TestToolBinarySkipsOrFails(t *testing.T) {
	const env = "KPROXY_TEST_TOOL_BIN"
	bin := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, value, ci    string
		wantSkip, wantFail bool
	}{
		{"unset", "", "", true, false},
		{"unset in CI", "", "true", false, true},
		{"no such file", bin + ".missing", "", true, false},
		{"no such file in CI", bin + ".missing", "true", false, true},
		{"there", bin, "true", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(env, c.value)
			t.Setenv("CI", c.ci)
			o := &outcome{TB: t}
			got := ToolBinary(o, env, "build it")
			if (o.skipped != "") != c.wantSkip || (o.failed != "") != c.wantFail {
				t.Fatalf("skipped %q, failed %q; want skip %v, fail %v", o.skipped, o.failed, c.wantSkip, c.wantFail)
			}
			if !c.wantSkip && !c.wantFail && got != bin {
				t.Errorf("ToolBinary = %q, want %q", got, bin)
			}
		})
	}
}
