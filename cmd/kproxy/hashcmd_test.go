package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/auth"
)

func runHash(args []string, stdin string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"hash-password"}, args...), cli{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb})
	return code, out.String(), errb.String()
}

func TestHashPasswordCommand(t *testing.T) {
	code, out, errOut := runHash([]string{"--mechanism", "SCRAM-SHA-256, SCRAM-SHA-512", "--iterations", strconv.Itoa(auth.MinIterations)}, "pa ss:wörd\r\nignored line\n")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	assertNoSecret(t, out+errOut, "pa ss:wörd")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 credentials, got %q", out)
	}
	for i, mech := range []string{auth.ScramSHA256, auth.ScramSHA512} {
		c, err := auth.ParseCredential(lines[i])
		if err != nil || c.Mechanism != mech || c.Iterations != auth.MinIterations {
			t.Fatalf("line %d: %+v, %v", i, c.Mechanism, err)
		}
		if derived, _ := auth.DeriveCredential(c.Mechanism, "pa ss:wörd", c.Salt, c.Iterations); !bytes.Equal(derived.StoredKey, c.StoredKey) {
			t.Fatalf("line %d does not verify the password", i)
		}
	}
	// Default: one SCRAM-SHA-512 credential; no trailing newline needed.
	code, out, _ = runHash(nil, "pw")
	if c, err := auth.ParseCredential(strings.TrimSpace(out)); code != 0 || err != nil || c.Mechanism != auth.ScramSHA512 || c.Iterations != auth.DefaultIterations {
		t.Fatalf("defaults: exit %d, %q, %v", code, out, err)
	}
}

func TestHashPasswordCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		stdin string
		code  int
		says  string
	}{
		{[]string{"--mechanism", "PLAIN"}, "pw\n", 2, "mechanism"},
		{[]string{"--iterations", "100"}, "pw\n", 2, "--iterations"},
		{[]string{"my-password"}, "", 2, "not from arguments"},
		{[]string{"--bogus"}, "pw\n", 2, "bogus"},
		{nil, "", 1, "empty password"},
		{nil, "\n", 1, "empty password"},
		{nil, strings.Repeat("x", maxPasswordLine+1), 1, "longer than"},
	} {
		code, out, errOut := runHash(tc.args, tc.stdin)
		if code != tc.code || out != "" || !strings.Contains(errOut, tc.says) {
			t.Errorf("%v: exit %d stdout %q stderr %q; want exit %d saying %q", tc.args, code, out, errOut, tc.code, tc.says)
		}
		assertNoSecret(t, errOut, "my-password")
	}
}

// assertNoSecret fails if any secret appears in s.
func assertNoSecret(t testing.TB, s string, secrets ...string) {
	t.Helper()
	for _, sec := range secrets {
		if sec != "" && strings.Contains(s, sec) {
			t.Fatalf("%q contains a secret", s)
		}
	}
}
