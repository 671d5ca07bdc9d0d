package auth

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

func TestParseOAuthClientFirstFromFranzGo(t *testing.T) {
	for _, a := range []oauth.Auth{
		{Token: "aaa.bbb.ccc"},
		{Token: "aaa.bbb.ccc", Zid: "alice", Extensions: map[string]string{"traceId": "x y", "logicalCluster": "lc-1"}},
	} {
		_, msg, err := a.AsMechanism().Authenticate(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		cf, err := parseOAuthClientFirst(msg)
		if err != nil {
			t.Fatalf("%q: %v", msg, err)
		}
		if cf.Token != a.Token || cf.AuthzID != a.Zid || len(cf.Extensions) != len(a.Extensions) {
			t.Fatalf("%q parsed as %+v", msg, cf)
		}
		for k, v := range a.Extensions {
			if cf.Extensions[k] != v {
				t.Fatalf("extension %s = %q, want %q", k, cf.Extensions[k], v)
			}
		}
	}
}

func TestParseOAuthClientFirst(t *testing.T) {
	ok := []struct{ msg, token, authz string }{
		{"n,,\x01auth=Bearer t.o.k\x01\x01", "t.o.k", ""},
		{"n,,\x01auth=bearer   t-o_k\x01\x01", "t-o_k", ""},
		{"n,a=we=2Cird=3Dname,\x01auth=Bearer x\x01k=v\x01\x01", "x", "we,ird=name"},
		{"n,,\x01host=h\x01auth=Bearer x\x01port=9\x01\x01", "x", ""},
	}
	for _, c := range ok {
		cf, err := parseOAuthClientFirst([]byte(c.msg))
		if err != nil || cf.Token != c.token || cf.AuthzID != c.authz {
			t.Errorf("%q: %+v, %v", c.msg, cf, err)
		}
	}
	bad := []string{
		"",
		"\x01",
		"y,,\x01auth=Bearer x\x01\x01", // channel binding flag: Kafka accepts n only
		"p=tls-unique,,\x01auth=Bearer x\x01\x01", // channel binding
		"n,\x01auth=Bearer x\x01\x01",             // gs2 header not closed
		"n,b=x,\x01auth=Bearer x\x01\x01",         // not an authzid
		"n,a=bad=name,\x01auth=Bearer x\x01\x01",
		"n,a=,\x01auth=Bearer x\x01\x01",
		"n,,auth=Bearer x\x01\x01", // no %x01 after the header
		"n,,\x01auth=Bearer x\x01", // one terminator
		"n,,\x01auth=Bearer x",     // none
		"n,,\x01\x01",              // no auth
		"n,,\x01k=v\x01\x01",       // no auth
		"n,,\x01auth=Bearer x\x01auth=Bearer y\x01\x01",
		"n,,\x01auth=Basic x\x01\x01",
		"n,,\x01auth=Bearer \x01\x01",
		"n,,\x01auth=Bearerx\x01\x01",
		"n,,\x01auth=Bearer x y\x01\x01", // space in the token
		"n,,\x01auth=Bearer x%\x01\x01",
		"n,,\x01auth=Bearer x\x01k1=v\x01\x01", // key not letters
		"n,,\x01auth=Bearer x\x01=v\x01\x01",
		"n,,\x01auth=Bearer x\x01k=\x01\x01",     // empty value
		"n,,\x01auth=Bearer x\x01k\x01\x01",      // no =
		"n,,\x01auth=Bearer x\x01k=\x00\x01\x01", // control character
		"n,,\x01auth=Bearer x\x01k=v\x01k=w\x01\x01",
		"n,,\x01auth=Bearer x\x01\x01\x01", // empty pair
	}
	for _, msg := range bad {
		if cf, err := parseOAuthClientFirst([]byte(msg)); !errors.Is(err, errOAuthMalformed) {
			t.Errorf("%q: accepted as %+v (err %v)", msg, cf, err)
		}
	}
	many := "n,,\x01auth=Bearer x\x01"
	for i := range maxOAuthExtensions + 1 {
		many += "k" + string(rune('a'+i/26)) + string(rune('a'+i%26)) + "=v\x01"
	}
	if _, err := parseOAuthClientFirst([]byte(many + "\x01")); !errors.Is(err, errOAuthMalformed) {
		t.Errorf("%d extensions accepted", maxOAuthExtensions+1)
	}
}
