package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile writes text to a file called name in a temporary directory of
// t's, readable by its owner alone, and returns its path.
func WriteFile(t testing.TB, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
