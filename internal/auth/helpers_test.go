package auth

import (
	"strings"
	"testing"
)

// testIterations keeps PBKDF2 cheap in tests while staying a valid count.
const testIterations = MinIterations

// credFor makes the text form of a credential for password.
func credFor(t testing.TB, mechanism, password string) string {
	t.Helper()
	c, err := HashPassword(mechanism, password, testIterations)
	if err != nil {
		t.Fatalf("HashPassword(%s): %v", mechanism, err)
	}
	return c
}

// testStore has:
//
//	alice / alice-secret: SCRAM-SHA-256 and SCRAM-SHA-512
//	bob   / bob-secret:   SCRAM-SHA-256 only
//	"we,ird=name" / weird-secret: SCRAM-SHA-512 only (escaping)
func testStore(t testing.TB) *Store {
	t.Helper()
	s, err := NewStore([]User{
		{Name: "alice", Credentials: []string{credFor(t, ScramSHA256, "alice-secret"), credFor(t, ScramSHA512, "alice-secret")}},
		{Name: "bob", Credentials: []string{credFor(t, ScramSHA256, "bob-secret")}},
		{Name: "we,ird=name", Credentials: []string{credFor(t, ScramSHA512, "weird-secret")}},
	})
	if err != nil {
		t.Fatalf("NewStore: %v", err)
	}
	return s
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
