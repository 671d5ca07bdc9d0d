// Package golden compares a checked-in generated file with what its
// generator produces now. It imports nothing of kproxy's, so that any
// package's tests can use it, including those testkit itself depends on.
package golden

import (
	"bytes"
	"os"
	"testing"
)

// Check fails t unless the file at path holds want. With update it first
// writes want there (the tests' -update flag). regenerate is the command
// that rewrites the file, told to whoever finds it stale.
func Check(t *testing.T, path string, want []byte, update bool, regenerate string) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what its generator produces now; regenerate it: %s", path, regenerate)
	}
}
