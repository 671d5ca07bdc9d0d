package auth

import (
	"bytes"
	"strings"
	"testing"
)

func TestStoreLookup(t *testing.T) {
	s := testStore(t)
	c, ok := s.Lookup("alice", ScramSHA512)
	if !ok || c.Mechanism != ScramSHA512 {
		t.Fatalf("Lookup(alice, 512) = %v, %v", c.Mechanism, ok)
	}
	if okPW, _ := verifyPassword(c, "alice-secret"); !okPW {
		t.Fatal("alice's credential does not verify her password")
	}
	if _, ok := s.Lookup("bob", ScramSHA512); ok {
		t.Fatal("bob has no SCRAM-SHA-512 credential but Lookup found one")
	}
}

func TestStoreDecoys(t *testing.T) {
	s := testStore(t)
	d1, ok := s.Lookup("mallory", ScramSHA256)
	if ok {
		t.Fatal("unknown user found")
	}
	d2, _ := s.Lookup("mallory", ScramSHA256)
	if !bytes.Equal(d1.Salt, d2.Salt) || d1.Iterations != d2.Iterations {
		t.Fatal("decoy salt changes between lookups: it would reveal the user is unknown")
	}
	other, _ := s.Lookup("trent", ScramSHA256)
	if bytes.Equal(d1.Salt, other.Salt) {
		t.Fatal("two unknown users share a decoy salt")
	}
	if d1.Iterations != testIterations {
		t.Fatalf("decoy iterations %d, want the common %d", d1.Iterations, testIterations)
	}
	if len(d1.StoredKey) != 32 || len(d1.ServerKey) != 32 || len(d1.Salt) != saltLen {
		t.Fatalf("decoy shape: salt %d stored %d server %d", len(d1.Salt), len(d1.StoredKey), len(d1.ServerKey))
	}
	if ok, _ := verifyPassword(d1, ""); ok {
		t.Fatal("decoy verifies a password")
	}
	// Another Store has another decoy key.
	d3, _ := testStore(t).Lookup("mallory", ScramSHA256)
	if bytes.Equal(d1.Salt, d3.Salt) {
		t.Fatal("decoys are predictable across stores")
	}
	// bob exists but lacks SCRAM-SHA-512: he gets a decoy of that shape.
	if d, ok := s.Lookup("bob", ScramSHA512); ok || len(d.StoredKey) != 64 {
		t.Fatalf("bob/512: ok %v, stored key %d bytes", ok, len(d.StoredKey))
	}
}

func TestNewStoreErrors(t *testing.T) {
	good := credFor(t, ScramSHA256, "pw")
	for name, tc := range map[string]struct {
		users []User
		want  string
	}{
		"empty name":     {[]User{{Name: "", Credentials: []string{good}}}, "user 0: empty user name"},
		"NUL in name":    {[]User{{Name: "a\x00b", Credentials: []string{good}}}, "NUL"},
		"duplicate user": {[]User{{Name: "a", Credentials: []string{good}}, {Name: "a", Credentials: []string{good}}}, `user "a": defined twice`},
		"no credentials": {[]User{{Name: "a"}}, `user "a": no credentials`},
		"bad credential": {[]User{{Name: "a", Credentials: []string{good, "plaintext-pw"}}}, `user "a" credential 1: not a SCRAM credential`},
		"same mechanism": {[]User{{Name: "a", Credentials: []string{good, credFor(t, ScramSHA256, "pw2")}}}, "a second SCRAM-SHA-256"},
	} {
		_, err := NewStore(tc.users)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to say %q", name, err, tc.want)
			continue
		}
		assertNoSecret(t, err.Error(), "plaintext-pw", good)
	}
}

func TestMostCommon(t *testing.T) {
	if got := mostCommon(nil, 7); got != 7 {
		t.Fatalf("empty: %d", got)
	}
	if got := mostCommon(map[int]int{8192: 2, 4096: 2, 16384: 1}, 7); got != 4096 {
		t.Fatalf("tie: %d, want the lower 4096", got)
	}
	if got := mostCommon(map[int]int{8192: 3, 4096: 2}, 7); got != 8192 {
		t.Fatalf("majority: %d", got)
	}
}
