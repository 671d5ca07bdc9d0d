package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

func franzScram(mechanism string, a scram.Auth) sasl.Mechanism {
	if mechanism == ScramSHA512 {
		return a.AsSha512Mechanism()
	}
	return a.AsSha256Mechanism()
}

// exchange drives franz-go's SCRAM client against a server session, the
// way a Kafka client and broker would, and returns the server's verdict.
// The client's verification of the server signature is checked too.
func exchange(t *testing.T, srv Session, mech sasl.Mechanism) error {
	t.Helper()
	cs, first, err := mech.Authenticate(context.Background(), "kproxy:9092")
	if err != nil {
		t.Fatalf("client start: %v", err)
	}
	serverFirst, done, err := srv.Step(first)
	if err != nil {
		return err
	}
	if done {
		t.Fatal("server done after client-first")
	}
	_, final, err := cs.Challenge(serverFirst)
	if err != nil {
		t.Fatalf("client rejected server-first %q: %v", serverFirst, err)
	}
	serverFinal, done, err := srv.Step(final)
	if err != nil {
		return err
	}
	if !done {
		t.Fatal("server not done after client-final")
	}
	cdone, _, err := cs.Challenge(serverFinal)
	if err != nil || !cdone {
		t.Fatalf("client rejected server-final: done %v, %v", cdone, err)
	}
	return nil
}

func TestScramAgainstFranzClient(t *testing.T) {
	store := testStore(t)
	for _, tc := range []struct {
		mech, user, pass string
		ok               bool
	}{
		{ScramSHA256, "alice", "alice-secret", true},
		{ScramSHA512, "alice", "alice-secret", true},
		{ScramSHA256, "bob", "bob-secret", true},
		{ScramSHA256, "alice", "not-her-pw", false},
		{ScramSHA512, "alice", "not-her-pw", false},
		{ScramSHA512, "alice", "bob-secret", false},
		{ScramSHA512, "bob", "bob-secret", false}, // no SHA-512 credential
		{ScramSHA256, "nobody", "x", false},
		{ScramSHA512, "we,ird=name", "weird-secret", true}, // escaped as we=2Cird=3Dname
		{ScramSHA512, "we,ird=name", "not-its-pw", false},
	} {
		srv, err := NewServer(tc.mech, store)
		if err != nil || srv.Mechanism() != tc.mech {
			t.Fatal(err)
		}
		err = exchange(t, srv, franzScram(tc.mech, scram.Auth{User: tc.user, Pass: tc.pass}))
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s %s: %v", tc.mech, tc.user, err)
		case tc.ok && srv.User() != tc.user:
			t.Errorf("%s %s: User() = %q", tc.mech, tc.user, srv.User())
		case !tc.ok && !errors.Is(err, ErrAuthenticationFailed):
			t.Errorf("%s %s/%s: error %v, want ErrAuthenticationFailed", tc.mech, tc.user, tc.pass, err)
		case !tc.ok:
			var ae *AuthenticationError
			if !errors.As(err, &ae) || ae.User != tc.user || ae.Mechanism != tc.mech {
				t.Errorf("%s %s: error %#v does not name user and mechanism", tc.mech, tc.user, err)
			}
			assertNoSecret(t, err.Error(), tc.pass)
			if srv.User() != "" {
				t.Errorf("User() = %q after failure", srv.User())
			}
		}
	}
}

// TestScramRFC7677Exchange replays the published SCRAM-SHA-256 exchange of
// RFC 7677 section 3 against the server, with the RFC's server nonce.
func TestScramRFC7677Exchange(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString(rfcSalt)
	cred, err := DeriveCredential(ScramSHA256, rfcPassword, salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	store, err := NewStore([]User{{Name: "user", Credentials: []string{cred.String()}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := newScramServer(ScramSHA256, store)
	srv.newNonce = func() (string, error) { return "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0", nil }
	out, _, err := srv.Step([]byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"; string(out) != want {
		t.Fatalf("server-first %q, want %q", out, want)
	}
	out, done, err := srv.Step([]byte("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))
	if err != nil || !done {
		t.Fatalf("client-final: done %v, %v", done, err)
	}
	if want := "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="; string(out) != want {
		t.Fatalf("server-final %q, want %q", out, want)
	}
}

// scramFirst starts a server session with a hand-written client-first.
func scramFirst(t *testing.T, mech, clientFirst string) (*scramServer, string, error) {
	t.Helper()
	srv := newScramServer(mech, testStore(t))
	out, _, err := srv.Step([]byte(clientFirst))
	return srv, string(out), err
}

// clientFinalFor computes a correct client-final message for the server
// session's state, with the given gs2 header echoed in c=.
func clientFinalFor(t *testing.T, srv *scramServer, password, gs2, nonce string) string {
	t.Helper()
	salted, err := saltedPassword(srv.h, password, srv.cred.Salt, srv.cred.Iterations)
	if err != nil {
		t.Fatal(err)
	}
	ck := clientKey(srv.h, salted)
	without := "c=" + base64.StdEncoding.EncodeToString([]byte(gs2)) + ",r=" + nonce
	sig := hmacSum(srv.h, storedKey(srv.h, ck), []byte(srv.first.Bare+","+srv.serverFirst+","+without))
	for i := range sig {
		sig[i] ^= ck[i]
	}
	return without + ",p=" + base64.StdEncoding.EncodeToString(sig)
}

func TestScramAuthzID(t *testing.T) {
	// franz-go sends a= when Zid is set.
	srv, _ := NewServer(ScramSHA256, testStore(t))
	if err := exchange(t, srv, franzScram(ScramSHA256, scram.Auth{Zid: "alice", User: "alice", Pass: "alice-secret"})); err != nil {
		t.Fatalf("authzid equal to user: %v", err)
	}
	srv, _ = NewServer(ScramSHA256, testStore(t))
	err := exchange(t, srv, franzScram(ScramSHA256, scram.Auth{Zid: "bob", User: "alice", Pass: "alice-secret"}))
	if !errors.Is(err, ErrAuthenticationFailed) || !strings.Contains(err.Error(), "authorization id") {
		t.Fatalf("authzid of another user: %v", err)
	}
	// An escaped authzid equal to the escaped user name is fine.
	srv2, _, err := scramFirst(t, ScramSHA512, "n,a=we=2Cird=3Dname,n=we=2Cird=3Dname,r=abc")
	if err != nil {
		t.Fatal(err)
	}
	final := clientFinalFor(t, srv2, "weird-secret", "n,a=we=2Cird=3Dname,", srv2.nonce)
	if _, done, err := srv2.Step([]byte(final)); err != nil || !done {
		t.Fatalf("escaped authzid: done %v, %v", done, err)
	}
	if srv2.User() != "we,ird=name" {
		t.Fatalf("User() = %q", srv2.User())
	}
}

func TestScramChannelBindingFlags(t *testing.T) {
	// "y": the client could bind but thinks the server cannot; accepted,
	// and c= must then repeat "y,,".
	srv, _, err := scramFirst(t, ScramSHA256, "y,,n=alice,r=abc")
	if err != nil {
		t.Fatalf("flag y: %v", err)
	}
	if _, done, err := srv.Step([]byte(clientFinalFor(t, srv, "alice-secret", "y,,", srv.nonce))); err != nil || !done {
		t.Fatalf("flag y final: done %v, %v", done, err)
	}
	for _, first := range []string{"p=tls-unique,,n=alice,r=abc", "x,,n=alice,r=abc", ",,n=alice,r=abc"} {
		if _, _, err := scramFirst(t, ScramSHA256, first); !errors.Is(err, ErrAuthenticationFailed) {
			t.Errorf("%q: %v, want a failure", first, err)
		}
	}
	if _, _, err := scramFirst(t, ScramSHA256, "p=tls-unique,,n=alice,r=abc"); !strings.Contains(err.Error(), "channel binding is not supported") {
		t.Errorf("p= error %q does not say channel binding is unsupported", err)
	}
	// c= must repeat the gs2 header exactly.
	srv, _, _ = scramFirst(t, ScramSHA256, "n,,n=alice,r=abc")
	if _, _, err := srv.Step([]byte(clientFinalFor(t, srv, "alice-secret", "y,,", srv.nonce))); !errors.Is(err, ErrAuthenticationFailed) || !strings.Contains(err.Error(), "channel binding") {
		t.Fatalf("c= mismatch: %v", err)
	}
}

func TestScramNonceAndProof(t *testing.T) {
	first := "n,,n=alice,r=clientnonce"
	srv, _, _ := scramFirst(t, ScramSHA256, first)
	if _, _, err := srv.Step([]byte(clientFinalFor(t, srv, "alice-secret", "n,,", "clientnonce"+"forged"))); !errors.Is(err, ErrAuthenticationFailed) || !strings.Contains(err.Error(), "nonce") {
		t.Fatalf("nonce mismatch: %v", err)
	}

	// librdkafka before 2.6.1 puts its own nonce in front of the server's
	// once more: accepted in exactly that form, nothing else.
	lib, _, _ := scramFirst(t, ScramSHA256, first)
	if _, done, err := lib.Step([]byte(clientFinalFor(t, lib, "alice-secret", "n,,", "clientnonce"+lib.nonce))); err != nil || !done {
		t.Fatalf("librdkafka's doubled client nonce: done %v, %v", done, err)
	}
	for _, nonce := range []string{"x" + "clientnonce", "clientnonceclientnonce", "other"} {
		bad, _, _ := scramFirst(t, ScramSHA256, first)
		if _, _, err := bad.Step([]byte(clientFinalFor(t, bad, "alice-secret", "n,,", nonce+bad.nonce))); !errors.Is(err, ErrAuthenticationFailed) || !strings.Contains(err.Error(), "nonce") {
			t.Fatalf("nonce %q+server nonce: %v", nonce, err)
		}
	}

	// Replay: a final message that succeeded once fails on a new
	// session with the same client-first, whose server nonce differs.
	a, _, _ := scramFirst(t, ScramSHA256, first)
	finalA := clientFinalFor(t, a, "alice-secret", "n,,", a.nonce)
	if _, done, err := a.Step([]byte(finalA)); err != nil || !done {
		t.Fatalf("original exchange: %v", err)
	}
	b, _, _ := scramFirst(t, ScramSHA256, first)
	if b.nonce == a.nonce {
		t.Fatal("server nonce repeated")
	}
	if _, _, err := b.Step([]byte(finalA)); !errors.Is(err, ErrAuthenticationFailed) {
		t.Fatalf("replayed final: %v", err)
	}

	// Tampered proof: one bit flipped.
	c, _, _ := scramFirst(t, ScramSHA256, first)
	final := clientFinalFor(t, c, "alice-secret", "n,,", c.nonce)
	i := strings.LastIndex(final, ",p=") + 3
	proof, _ := base64.StdEncoding.DecodeString(final[i:])
	proof[0] ^= 1
	tampered := final[:i] + base64.StdEncoding.EncodeToString(proof)
	if _, _, err := c.Step([]byte(tampered)); !errors.Is(err, ErrAuthenticationFailed) || !strings.Contains(err.Error(), "proof") {
		t.Fatalf("tampered proof: %v", err)
	}

	// A proof of the wrong length.
	d, _, _ := scramFirst(t, ScramSHA256, first)
	short := "c=biws,r=" + d.nonce + ",p=" + base64.StdEncoding.EncodeToString([]byte("short"))
	if _, _, err := d.Step([]byte(short)); !errors.Is(err, ErrAuthenticationFailed) {
		t.Fatalf("short proof: %v", err)
	}

	// A client-final with extensions between r= and p= is part of the
	// AuthMessage and verifies.
	e, _, _ := scramFirst(t, ScramSHA256, first)
	without := "c=biws,r=" + e.nonce + ",x=1"
	salted, _ := saltedPassword(e.h, "alice-secret", e.cred.Salt, e.cred.Iterations)
	ck := clientKey(e.h, salted)
	sig := hmacSum(e.h, storedKey(e.h, ck), []byte(e.first.Bare+","+e.serverFirst+","+without))
	for i := range sig {
		sig[i] ^= ck[i]
	}
	if _, done, err := e.Step([]byte(without + ",p=" + base64.StdEncoding.EncodeToString(sig))); err != nil || !done {
		t.Fatalf("final with extension: done %v, %v", done, err)
	}
}

func TestScramUnknownUserLooksNormal(t *testing.T) {
	store := testStore(t)
	first := func(user string) string {
		srv, _ := NewServer(ScramSHA256, store)
		out, done, err := srv.Step([]byte("n,,n=" + user + ",r=abc"))
		if err != nil || done {
			t.Fatalf("client-first for %s: done %v, %v", user, done, err)
		}
		return string(out)
	}
	saltOf := func(serverFirst string) string { return strings.Split(serverFirst, ",")[1] }
	if saltOf(first("nobody")) != saltOf(first("nobody")) {
		t.Fatal("unknown user's salt changes between attempts")
	}
	if !strings.HasSuffix(first("nobody"), ",i=4096") || !strings.HasSuffix(first("alice"), ",i=4096") {
		t.Fatal("unknown and known users get different iteration counts")
	}
}

func TestScramMalformedAndState(t *testing.T) {
	for _, msg := range []string{
		"", "n", "n,", "n,,", "n,,r=abc", "n,,n=alice", "n,,n=alice,x=abc", "n,,n=,r=abc",
		"n,,n=al=ice,r=abc", "n,,n=alice,r=", "n,,n=alice,r=a b", "n,,m=ext,n=alice,r=abc",
		"n,b=x,n=alice,r=abc", "n,a=,n=alice,r=abc", "n,,n=alice,r=abc,=v", "n,,n=alice,r=abc,k=1,k=2",
		"n,,n=\xff,r=abc", "n,,n=a\x00b,r=abc",
	} {
		srv, _ := NewServer(ScramSHA256, testStore(t))
		if _, _, err := srv.Step([]byte(msg)); !errors.Is(err, ErrAuthenticationFailed) {
			t.Errorf("client-first %q: %v, want ErrAuthenticationFailed", msg, err)
		}
		if _, _, err := srv.Step([]byte(msg)); !errors.Is(err, ErrIllegalState) {
			t.Errorf("step after failure: %v, want ErrIllegalState", err)
		}
	}
	if _, _, err := scramFirst(t, ScramSHA256, "n,,n=alice,r=abc,tokenauth=true"); !errors.Is(err, ErrAuthenticationFailed) || !strings.Contains(err.Error(), "delegation") {
		t.Errorf("tokenauth: %v", err)
	}
	for _, final := range []string{"", "c=biws", "c=biws,r=x", "r=x,c=biws,p=AA==", "c=***,r=x,p=AA==", "c=biws,r=x,p=***", "c=biws,r=x,p=AA==,x=1", "c=biws,r=x,bad,p=AA==", "c=biws,r=x,p=A\rA=="} {
		srv, _, err := scramFirst(t, ScramSHA256, "n,,n=alice,r=abc")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := srv.Step([]byte(final)); !errors.Is(err, ErrAuthenticationFailed) {
			t.Errorf("client-final %q: %v", final, err)
		}
	}
	srv, _ := NewServer(ScramSHA256, testStore(t))
	if err := exchange(t, srv, franzScram(ScramSHA256, scram.Auth{User: "alice", Pass: "alice-secret"})); err != nil {
		t.Fatal(err)
	}
	if _, _, err := srv.Step([]byte("n,,n=alice,r=abc")); !errors.Is(err, ErrIllegalState) {
		t.Fatalf("step after success: %v", err)
	}
	if _, err := NewServer("GSSAPI", testStore(t)); !errors.Is(err, ErrUnsupportedMechanism) {
		t.Fatalf("GSSAPI: %v", err)
	}
}

func TestSASLNameEscaping(t *testing.T) {
	for plain, escaped := range map[string]string{"a": "a", "a,b": "a=2Cb", "a=b": "a=3Db", "=,": "=3D=2C", "ü": "ü"} {
		if got := escapeSASLName(plain); got != escaped {
			t.Errorf("escape(%q) = %q, want %q", plain, got, escaped)
		}
		if got, err := unescapeSASLName(escaped); err != nil || got != plain {
			t.Errorf("unescape(%q) = %q, %v", escaped, got, err)
		}
	}
	for _, bad := range []string{"", "a=", "a=2", "a=2c", "a=3d", "a=41", "a,b", "\xff", "a\x00"} {
		if _, err := unescapeSASLName(bad); err == nil {
			t.Errorf("unescape(%q) succeeded", bad)
		}
	}
}
