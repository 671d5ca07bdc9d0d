package auth

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// RFC 7677 section 3: the SCRAM-SHA-256 example exchange.
const (
	rfcSalt     = "W22ZaJ0SNY7soEsUEjb6gQ=="
	rfcPassword = "pencil"
)

func TestHashPasswordRoundTrip(t *testing.T) {
	for _, mech := range []string{ScramSHA256, ScramSHA512} {
		text, err := HashPassword(mech, "s3cret", 0)
		if err != nil {
			t.Fatalf("HashPassword(%s): %v", mech, err)
		}
		assertNoSecret(t, text, "s3cret")
		c, err := ParseCredential(text)
		if err != nil {
			t.Fatalf("ParseCredential(HashPassword(%s)): %v", mech, err)
		}
		if c.Mechanism != mech || c.Iterations != DefaultIterations || len(c.Salt) != saltLen {
			t.Fatalf("parsed %s credential: mechanism %s iterations %d salt %d bytes", mech, c.Mechanism, c.Iterations, len(c.Salt))
		}
		if c.String() != text {
			t.Fatalf("String() = %q, want %q", c.String(), text)
		}
		for pw, want := range map[string]bool{"s3cret": true, "s3cret ": false, "": false} {
			ok, err := verifyPassword(c, pw)
			if err != nil || ok != want {
				t.Fatalf("verifyPassword(%s, %q) = %v, %v; want %v", mech, pw, ok, err, want)
			}
		}
	}
	a, _ := HashPassword(ScramSHA256, "same", testIterations)
	b, _ := HashPassword(ScramSHA256, "same", testIterations)
	if a == b {
		t.Fatal("two hashes of one password are equal: the salt is not random")
	}
}

func TestHashPasswordRejects(t *testing.T) {
	for _, tc := range []struct {
		mech, pw string
		it       int
	}{
		{"PLAIN", "x", 0},
		{"SCRAM-SHA-1", "x", 0},
		{ScramSHA256, "", 0},
		{ScramSHA256, "x", MinIterations - 1},
		{ScramSHA256, "x", MaxIterations + 1},
	} {
		if _, err := HashPassword(tc.mech, tc.pw, tc.it); err == nil {
			t.Errorf("HashPassword(%q, %q, %d) succeeded", tc.mech, tc.pw, tc.it)
		}
	}
}

// The stored and server keys match RFC 7677's example: the client proof and
// server signature published there verify against them (see
// TestScramRFC7677Exchange), so here only the shape is checked.
func TestDeriveCredentialRFC7677(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString(rfcSalt)
	c, err := DeriveCredential(ScramSHA256, rfcPassword, salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.StoredKey) != 32 || len(c.ServerKey) != 32 {
		t.Fatalf("key sizes %d, %d", len(c.StoredKey), len(c.ServerKey))
	}
	back, err := ParseCredential(c.String())
	if err != nil {
		t.Fatalf("ParseCredential(%q): %v", c.String(), err)
	}
	if back.String() != c.String() {
		t.Fatal("round trip changed the credential")
	}
}

func TestParseCredentialErrors(t *testing.T) {
	good, err := ParseCredential(credFor(t, ScramSHA512, "pw"))
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.StdEncoding.EncodeToString
	salt, stored, server := enc(good.Salt), enc(good.StoredKey), enc(good.ServerKey)
	for name, tc := range map[string]struct{ text, want string }{
		"plaintext password": {"hunter2hunter2", "5 colon-separated fields"},
		"four fields":        {"SCRAM-SHA-512:4096:" + salt + ":" + stored, "got 4"},
		"mechanism":          {"SCRAM-SHA-1:4096:" + salt + ":" + stored + ":" + server, "mechanism must be"},
		"lower-case mech":    {"scram-sha-512:4096:" + salt + ":" + stored + ":" + server, "mechanism must be"},
		"iterations text":    {"SCRAM-SHA-512:many:" + salt + ":" + stored + ":" + server, "iterations is not a number"},
		"iterations low":     {"SCRAM-SHA-512:4095:" + salt + ":" + stored + ":" + server, "outside"},
		"iterations high":    {"SCRAM-SHA-512:16385:" + salt + ":" + stored + ":" + server, "outside"},
		"salt base64":        {"SCRAM-SHA-512:4096:%%%:" + stored + ":" + server, "salt is not"},
		"salt unpadded":      {"SCRAM-SHA-512:4096:" + strings.TrimRight(enc([]byte("0123456789")), "=") + ":" + stored + ":" + server, "salt is not"},
		"salt newline":       {"SCRAM-SHA-512:4096:" + salt[:4] + "\n" + salt[4:] + ":" + stored + ":" + server, "salt is not"},
		"salt short":         {"SCRAM-SHA-512:4096:" + enc([]byte("1234567")) + ":" + stored + ":" + server, "at least 8"},
		"stored key size":    {"SCRAM-SHA-256:4096:" + salt + ":" + stored + ":" + server, "stored key is 64 bytes, want 32"},
		"server key base64":  {"SCRAM-SHA-512:4096:" + salt + ":" + stored + ":!!", "server key is not"},
	} {
		_, err := ParseCredential(tc.text)
		if !errors.Is(err, ErrNotCredential) {
			t.Errorf("%s: error %v does not wrap ErrNotCredential", name, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q does not say %q", name, err, tc.want)
		}
		assertNoSecret(t, err.Error(), stored, server, salt, "hunter2")
	}
}
