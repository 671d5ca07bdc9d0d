package kproxytest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// AuditFile is an audit.output file in a test's temporary directory: name
// it in the configuration's audit section, and read back what kproxy
// wrote. Every line is there once Kproxy.Stop has returned.
type AuditFile string

// NewAuditFile names an audit file that does not exist yet.
func NewAuditFile(t testing.TB) AuditFile {
	return AuditFile(filepath.Join(t.TempDir(), "audit.log"))
}

// String is what kproxy has written to the file so far ("" before its
// first line).
func (a AuditFile) String(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(string(a))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read the audit file: %v", err)
	}
	return string(b)
}
