package auth

import (
	"encoding/base64"
	"strings"
	"testing"
)

// FuzzJWTExpiry: jwtExpiry reads the exp claim of whatever the token
// endpoint returned; it must never panic, and a non-zero result needs a
// three-part token whose middle part decodes.
func FuzzJWTExpiry(f *testing.F) {
	enc := base64.RawURLEncoding.EncodeToString
	for _, payload := range []string{`{"exp":1800000000}`, `{"exp":1.8e9}`, `{"exp":-1}`, `{"exp":"1800000000"}`, `{"exp":1e300}`, `{"EXP":1800000000}`, `{"exp":1,"Exp":1800000000}`, `{"exp":1800000000,"exp":1}`, `null`, `[]`, ``} {
		f.Add("eyJhbGciOiJSUzI1NiJ9." + enc([]byte(payload)) + ".c2ln")
	}
	f.Add("a.b")
	f.Add("..")
	f.Fuzz(func(t *testing.T, token string) {
		exp := jwtExpiry(token)
		if exp.IsZero() {
			return
		}
		parts := strings.Split(token, ".")
		if len(parts) != 3 {
			t.Fatalf("%q: expiry %v from %d parts", token, exp, len(parts))
		}
		if _, err := base64.RawURLEncoding.DecodeString(parts[1]); err != nil {
			t.Fatalf("%q: expiry %v from an undecodable payload", token, exp)
		}
		if exp.Unix() <= 0 {
			t.Fatalf("%q: expiry %v not after the epoch", token, exp)
		}
	})
}
