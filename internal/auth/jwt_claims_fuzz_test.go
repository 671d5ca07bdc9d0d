package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"testing"
)

// FuzzJWTClaims: parseJWTClaims never panics and fails only with errClaims;
// what it accepts is a JSON object encoding/json accepts too, with exactly
// the same top-level member names (no case folded, none dropped), and what
// it refuses is invalid JSON, not an object, a duplicate member or nesting
// beyond maxClaimsDepth; the typed readers never panic on what it accepts.
func FuzzJWTClaims(f *testing.F) {
	for _, seed := range []string{
		`{"iss":"https://idp","sub":"alice","aud":["kafka"],"exp":1800000000,"scope":"openid kafka"}`,
		`{"exp":1000,"Exp":1800000000}`,
		`{"EXP":1800000000}`,
		`{"iss":"https://evil","ISS":"https://idp"}`,
		`{"AUD":"kafka","Nbf":1}`,
		`{"exp":1,"exp":1800000000}`,
		`{"groups":["dev"],"groups":["admin"]}`,
		`{"realm_access":{"roles":["a"],"roles":["b"]}}`,
		`{"exp":1.5e9,"x":[[[[{}]]]],"n":null,"b":true}`,
		`{"exp":1e400}`,
		`{"a":1}{"a":2}`,
		`[]`, `null`, ``, `{`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		claims, err := parseJWTClaims(payload)
		var std map[string]any
		dec := json.NewDecoder(bytes.NewReader(payload))
		dec.UseNumber()
		stdErr := dec.Decode(&std)
		if stdErr == nil && dec.More() {
			stdErr = errors.New("data after the object")
		}
		if err != nil {
			if !errors.Is(err, errClaims) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if stdErr != nil || std == nil {
			t.Fatalf("accepted %q, which encoding/json refuses as an object: %v", payload, stdErr)
		}
		if got, want := slices.Sorted(maps.Keys(claims)), slices.Sorted(maps.Keys(std)); !slices.Equal(got, want) {
			t.Fatalf("member names %q, encoding/json sees %q", got, want)
		}
		for _, name := range []string{"exp", "nbf", "iat"} {
			_, _, _ = claims.numericDate(name)
		}
		_, _, _ = claims.str("iss")
		_, _ = claims.audience()
		_, _ = flattenClaims(claims)
	})
}
