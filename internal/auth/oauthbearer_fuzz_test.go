package auth

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// acceptAll is a TokenValidator that accepts any token as user "u", so the
// fuzz target can compare the server session with the parser.
type acceptAll struct{}

func (acceptAll) Validate(context.Context, string) (ValidatedToken, error) {
	return ValidatedToken{Principal: "u", Expiry: time.Now().Add(time.Hour)}, nil
}

// FuzzOAuthBearerClientFirst: the client-first parser never panics, fails
// only with its sentinel, and what it accepts is consistent with its
// input: the token is base64url and dots and appears in the message after
// "auth=", the extensions are letter keys with values within RFC 7628's
// set and appear as key=value pairs, no more than the limit; a server
// session accepts exactly what the parser accepts (less an authzid other
// than the principal), and its refusals never echo the message.
func FuzzOAuthBearerClientFirst(f *testing.F) {
	for _, seed := range []string{
		"n,,\x01auth=Bearer aaa.bbb.ccc\x01\x01",
		"n,a=u,\x01auth=Bearer t\x01host=h\x01port=9092\x01\x01",
		"n,a=we=2Cird,\x01auth=bearer  t\x01k=v w\x01\x01",
		"y,,\x01auth=Bearer t\x01\x01",
		"n,,\x01\x01",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cf, err := parseOAuthClientFirst(data)
		srv := &oauthServer{validator: acceptAll{}}
		challenge, done, serr := srv.Step(data)
		if err != nil {
			if !errors.Is(err, errOAuthMalformed) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			if done || !errors.Is(serr, ErrAuthenticationFailed) || challenge != nil {
				t.Fatalf("server accepted what the parser refused: done %v err %v", done, serr)
			}
			if len(data) > 8 && strings.Contains(serr.Error(), string(data)) {
				t.Fatal("refusal echoes the message")
			}
			return
		}
		if cf.Token == "" || !bytes.Contains(data, []byte(cf.Token+"\x01")) {
			t.Fatalf("token %q not in the message", cf.Token)
		}
		for i := range len(cf.Token) {
			if c := cf.Token[i]; !(isAlnum(c) || c == '-' || c == '_' || c == '.') {
				t.Fatalf("token %q has %q", cf.Token, c)
			}
		}
		if len(cf.Extensions) > maxOAuthExtensions {
			t.Fatalf("%d extensions", len(cf.Extensions))
		}
		for k, v := range cf.Extensions {
			if !oauthKey([]byte(k)) || !oauthValue([]byte(v)) || k == "auth" || !bytes.Contains(data, []byte("\x01"+k+"="+v+"\x01")) {
				t.Fatalf("extension %q=%q", k, v)
			}
		}
		if cf.AuthzID != "" && !bytes.HasPrefix(data, []byte("n,a="+escapeSASLName(cf.AuthzID)+",")) {
			t.Fatalf("authzid %q not in the header", cf.AuthzID)
		}
		refused := cf.AuthzID != "" && cf.AuthzID != "u"
		switch {
		case refused && (done || string(challenge) != `{"status":"invalid_token"}`):
			t.Fatalf("authzid %q: done %v challenge %q", cf.AuthzID, done, challenge)
		case !refused && (!done || serr != nil || srv.User() != "u"):
			t.Fatalf("server refused what the parser accepted: %v", serr)
		}
	})
}
