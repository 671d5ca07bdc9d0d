package auth

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPlain(t *testing.T) {
	store := testStore(t)
	for _, tc := range []struct {
		msg, user string // user "" means failure
		reason    string
	}{
		{"\x00alice\x00alice-secret", "alice", ""},
		{"alice\x00alice\x00alice-secret", "alice", ""}, // authzid = user
		{"\x00bob\x00bob-secret", "bob", ""},            // SHA-256 only
		{"\x00we,ird=name\x00weird-secret", "we,ird=name", ""},
		{"\x00alice\x00Alice-secret", "", "wrong password"},
		{"\x00alice\x00bob-secret", "", "wrong password"},
		{"\x00nobody\x00nobody-secret", "", "unknown user"},
		{"bob\x00alice\x00alice-secret", "", "authorization id"},
		{"\x00alice\x00", "", "empty password"},
		{"\x00\x00alice-secret", "", "empty user"},
		{"alice\x00alice-secret", "", "3 NUL-separated"},
		{"\x00alice\x00alice-secret\x00", "", "3 NUL-separated"},
		{"\x00alice\x00" + strings.Repeat("p", 256), "", "password longer than 255"},
		{"\x00alice\x00\xff\xfe", "", "password is not UTF-8"},
	} {
		srv, err := NewServer(Plain, store)
		if err != nil || srv.Mechanism() != Plain {
			t.Fatal(err)
		}
		out, done, err := srv.Step([]byte(tc.msg))
		if tc.user != "" {
			if err != nil || !done || len(out) != 0 || srv.User() != tc.user {
				t.Errorf("%q: out %q done %v user %q err %v", tc.msg, out, done, srv.User(), err)
			}
			continue
		}
		if !errors.Is(err, ErrAuthenticationFailed) || done || srv.User() != "" {
			t.Errorf("%q: done %v err %v, want ErrAuthenticationFailed", tc.msg, done, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%q: error %q does not say %q", tc.msg, err, tc.reason)
		}
		pw := tc.msg[strings.LastIndexByte(tc.msg, 0)+1:]
		assertNoSecret(t, err.Error(), pw)
		if _, _, err := srv.Step([]byte(tc.msg)); !errors.Is(err, ErrIllegalState) {
			t.Errorf("second step: %v", err)
		}
	}
}

// An unknown user costs a PBKDF2 like a known one, so that response time
// does not tell which users exist. The bounds are loose: only a missing
// computation (a difference of orders of magnitude) must fail.
func TestPlainUnknownUserTiming(t *testing.T) {
	store, err := NewStore([]User{{Name: "alice", Credentials: []string{credFor(t, ScramSHA512, "alice-secret")}}})
	if err != nil {
		t.Fatal(err)
	}
	median := func(msg string) time.Duration {
		var d []time.Duration
		for i := 0; i < 7; i++ {
			srv, _ := NewServer(Plain, store)
			start := time.Now()
			srv.Step([]byte(msg))
			d = append(d, time.Since(start))
		}
		slices.Sort(d)
		return d[len(d)/2]
	}
	known, unknown := median("\x00alice\x00guess-3"), median("\x00nobody\x00guess-3")
	if unknown < known/4 || unknown > known*4 {
		t.Fatalf("wrong password takes %v, unknown user %v", known, unknown)
	}
}
