package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestJWTValidatorClaimNamesAreExact: a token signed by a trusted key
// whose claims differ from a valid token's only in the case of a claim
// name, or in a duplicate member, is refused. RFC 7519 section 4 makes
// claim names case-sensitive, and Kafka's validator (jose4j) refuses
// duplicate member names, at any level.
func TestJWTValidatorClaimNamesAreExact(t *testing.T) {
	p := startIdP(t)
	v := newTestValidator(t, p, idpKeySet(t, p, 0), nil)
	now := time.Now()
	past, future := now.Add(-time.Hour).Unix(), now.Add(time.Hour).Unix()
	// good is a valid payload's members but for the ones a case adds.
	good := func(members string) string {
		return fmt.Sprintf(`{"iss":%q,"sub":"alice","aud":"kafka","iat":%d,%s}`, p.Issuer(), now.Unix(), members)
	}
	if _, err := v.Validate(context.Background(), p.MintRaw(good(fmt.Sprintf(`"exp":%d`, future)))); err != nil {
		t.Fatalf("a valid raw token: %v", err)
	}
	cases := []struct{ name, payload, reason string }{
		{"expired exp, future Exp", good(fmt.Sprintf(`"exp":%d,"Exp":%d`, past, future)), "expired at"},
		{"EXP without exp", good(fmt.Sprintf(`"EXP":%d`, future)), "no exp claim"},
		{"other iss, ISS the issuer", fmt.Sprintf(`{"iss":"https://evil.example","ISS":%q,"sub":"alice","aud":"kafka","exp":%d}`, p.Issuer(), future), "is not the expected"},
		{"AUD without aud", fmt.Sprintf(`{"iss":%q,"sub":"alice","AUD":"kafka","exp":%d}`, p.Issuer(), future), "does not include the expected"},
		{"future nbf, past Nbf", good(fmt.Sprintf(`"exp":%d,"nbf":%d,"Nbf":%d`, future, future, past)), "not valid before"},
		{"exp twice", good(fmt.Sprintf(`"exp":%d,"exp":%d`, past, future)), `member "exp" given twice`},
		{"iss twice", fmt.Sprintf(`{"iss":"https://evil.example","iss":%q,"sub":"alice","aud":"kafka","exp":%d}`, p.Issuer(), future), `member "iss" given twice`},
		{"sub twice", good(fmt.Sprintf(`"exp":%d,"sub":"admin"`, future)), `member "sub" given twice`},
		{"policy claim twice", good(fmt.Sprintf(`"exp":%d,"groups":["dev"],"groups":["admin"]`, future)), `member "groups" given twice`},
		{"nested member twice", good(fmt.Sprintf(`"exp":%d,"realm_access":{"roles":["dev"],"roles":["admin"]}`, future)), `member "roles" given twice`},
		{"Sub without sub", fmt.Sprintf(`{"iss":%q,"Sub":"admin","aud":"kafka","exp":%d}`, p.Issuer(), future), `no non-empty string claim "sub"`},
		{"exp a string", good(`"exp":"99999999999"`), "exp is not a number"},
		{"aud an object", fmt.Sprintf(`{"iss":%q,"sub":"alice","aud":{"kafka":1},"exp":%d}`, p.Issuer(), future), "aud is neither"},
		{"data after the object", good(fmt.Sprintf(`"exp":%d`, future)) + `{"exp":1}`, "data after the JSON object"},
		{"deep nesting", good(fmt.Sprintf(`"exp":%d,"x":%s%s`, future, strings.Repeat("[", 40), strings.Repeat("]", 40))), "nested deeper than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok, err := v.Validate(context.Background(), p.MintRaw(c.payload))
			var te *TokenError
			if !errors.As(err, &te) || te.Status != "invalid_token" {
				t.Fatalf("accepted (principal %q) or not an invalid_token: %v", tok.Principal, err)
			}
			if !strings.Contains(te.Reason, c.reason) {
				t.Fatalf("reason %q, want it to say %q", te.Reason, c.reason)
			}
		})
	}
}

// TestJWTValidatorExactNamesKeepClaimsApart: claims whose names differ in
// case are distinct claims, each seen under its own name by the policies.
func TestJWTValidatorExactNamesKeepClaimsApart(t *testing.T) {
	p := startIdP(t)
	v := newTestValidator(t, p, idpKeySet(t, p, 0), nil)
	tok, err := v.Validate(context.Background(), p.MintRaw(fmt.Sprintf(
		`{"iss":%q,"sub":"alice","aud":"kafka","exp":%d,"groups":["dev"],"Groups":["admin"],"tier":1.50}`,
		p.Issuer(), time.Now().Add(time.Hour).Unix())))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tok.Claims["groups"], ","); got != "dev" {
		t.Errorf("groups = %q, want dev", got)
	}
	if got := strings.Join(tok.Claims["Groups"], ","); got != "admin" {
		t.Errorf("Groups = %q, want admin", got)
	}
	if got := strings.Join(tok.Claims["tier"], ","); got != "1.50" {
		t.Errorf("tier = %q, want the number's JSON text 1.50", got)
	}
}

// TestJWTValidatorScopeSplitsOnSpaceOnly: RFC 6749 section 3.3 separates
// scope-tokens with U+0020; a tab or a no-break space separates nothing
// and is not an NQCHAR, so a scope holding one is refused rather than
// read as two scopes. Repeated spaces are skipped, as Kafka does.
func TestJWTValidatorScopeSplitsOnSpaceOnly(t *testing.T) {
	p := startIdP(t)
	v := newTestValidator(t, p, idpKeySet(t, p, 0), func(o *JWTValidatorOptions) { o.RequiredScopes = []string{"kafka.admin"} })
	for name, scope := range map[string]any{
		"tab":                  "openid\tkafka.admin",
		"no-break space":       "openid\u00a0kafka.admin",
		"line feed":            "openid\nkafka.admin",
		"array element tab":    []string{"openid\tkafka.admin"},
		"quote in a scope":     `openid "kafka.admin`,
		"backslash in a scope": `openid kafka.admin\`,
	} {
		t.Run(name, func(t *testing.T) {
			tok, err := v.Validate(context.Background(), p.Mint(map[string]any{"sub": "alice", "scope": scope}))
			var te *TokenError
			if !errors.As(err, &te) || te.Status != "invalid_token" || !strings.Contains(te.Reason, "malformed scope") {
				t.Fatalf("scope %q: accepted with scopes %q, or not refused as malformed: %v", scope, tok.Claims["scope"], err)
			}
		})
	}
	tok, err := v.Validate(context.Background(), p.Mint(map[string]any{"sub": "alice", "scp": "  openid   kafka.admin "}))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tok.Claims["scp"], ","); got != "openid,kafka.admin" {
		t.Fatalf("scp = %q, want openid,kafka.admin", got)
	}
}
