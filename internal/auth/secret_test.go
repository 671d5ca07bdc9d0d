package auth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveSecret(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Setenv("KPROXY_TEST_SECRET", "env-s3cret")
	t.Setenv("KPROXY_TEST_EMPTY", "")
	for _, tc := range []struct {
		name, value, file, env, want string
	}{
		{"literal", "lit-s3cret", "", "", "lit-s3cret"},
		{"file LF", "", write("lf", "file-s3cret\n"), "", "file-s3cret"},
		{"file CRLF", "", write("crlf", "file-s3cret\r\n"), "", "file-s3cret"},
		{"file bare", "", write("bare", "file-s3cret"), "", "file-s3cret"},
		{"file two newlines", "", write("two", "file-s3cret\n\n"), "", "file-s3cret\n"},
		{"file inner space", "", write("space", " a b \n"), "", " a b "},
		{"env", "", "", "KPROXY_TEST_SECRET", "env-s3cret"},
	} {
		got, err := ResolveSecret(tc.value, tc.file, tc.env)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name, value, file, env, want string
	}{
		{"none", "", "", "", "none given"},
		{"two", "lit-s3cret", write("x", "file-s3cret"), "", "exactly one"},
		{"missing file", "", missing, "", missing},
		{"empty file", "", write("empty", "\n"), "", "empty"},
		{"unset env", "", "", "KPROXY_TEST_UNSET_VAR", "KPROXY_TEST_UNSET_VAR: not set"},
		{"empty env", "", "", "KPROXY_TEST_EMPTY", "KPROXY_TEST_EMPTY: empty"},
	} {
		_, err := ResolveSecret(tc.value, tc.file, tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want it to say %q", tc.name, err, tc.want)
			continue
		}
		assertNoSecret(t, err.Error(), "lit-s3cret", "file-s3cret", "env-s3cret")
	}
}
