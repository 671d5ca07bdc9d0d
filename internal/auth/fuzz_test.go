package auth

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzScramClientFirst: the client-first parser never panics, fails only
// with its sentinels, and what it accepts is consistent with its input: the
// header and bare message make up the input, the bare message starts with
// the re-escaped user and the nonce, the user is valid, and a server
// session accepts exactly what the parser accepts (less authzid and
// tokenauth refusals). What passthrough reads is FuzzPassthroughUser's.
func FuzzScramClientFirst(f *testing.F) {
	store := testStore(f)
	f.Add([]byte("n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cf, err := parseScramClientFirst(data)
		srv := newScramServer(ScramSHA256, store)
		_, done, serr := srv.Step(data)
		if done {
			t.Fatal("server done after client-first")
		}
		if err != nil {
			if !errors.Is(err, errScramMalformed) && !errors.Is(err, errChannelBinding) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			if !errors.Is(serr, ErrAuthenticationFailed) {
				t.Fatalf("server accepted what the parser refused: %v", serr)
			}
			return
		}
		if cf.GS2Header+cf.Bare != string(data) {
			t.Fatalf("header %q + bare %q != input", cf.GS2Header, cf.Bare)
		}
		if !strings.HasPrefix(cf.Bare, "n="+escapeSASLName(cf.User)+",r="+cf.Nonce) {
			t.Fatalf("bare %q does not start with user %q and nonce %q", cf.Bare, cf.User, cf.Nonce)
		}
		if cf.User == "" || !utf8.ValidString(cf.User) || strings.ContainsRune(cf.User, 0) || !printable(cf.Nonce) {
			t.Fatalf("accepted user %q nonce %q", cf.User, cf.Nonce)
		}
		if cf.AuthzID != "" && !strings.Contains(cf.GS2Header, ",a="+escapeSASLName(cf.AuthzID)+",") {
			t.Fatalf("authzid %q not in header %q", cf.AuthzID, cf.GS2Header)
		}
		refused := (cf.AuthzID != "" && cf.AuthzID != cf.User) || cf.Extensions["tokenauth"] == "true"
		if (serr != nil) != refused {
			t.Fatalf("server error %v; refusal expected %v", serr, refused)
		}
	})
}

// FuzzScramClientFinal: the client-final parser never panics, fails only
// with its sentinel, and an accepted message is the part without proof
// plus the re-encoded proof. A server session never accepts a fuzzed final
// message: it cannot know the random server nonce.
func FuzzScramClientFinal(f *testing.F) {
	store := testStore(f)
	f.Add([]byte("c=biws,r=abc,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))
	f.Fuzz(func(t *testing.T, data []byte) {
		cf, err := parseScramClientFinal(data)
		if err != nil {
			if !errors.Is(err, errScramMalformed) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
		} else if cf.WithoutProof+",p="+base64.StdEncoding.EncodeToString(cf.Proof) != string(data) {
			t.Fatalf("without-proof %q and proof do not rebuild the input", cf.WithoutProof)
		}
		srv := newScramServer(ScramSHA256, store)
		if _, _, err := srv.Step([]byte("n,,n=alice,r=abc")); err != nil {
			t.Fatal(err)
		}
		if _, done, err := srv.Step(data); done || !errors.Is(err, ErrAuthenticationFailed) {
			t.Fatalf("fuzzed client-final: done %v, %v", done, err)
		}
	})
}

// FuzzPlain: the PLAIN parser never panics, fails only with its sentinel,
// and an accepted message is exactly its three fields joined by NUL, with
// user and password non-empty and every field UTF-8 of at most 255 bytes.
func FuzzPlain(f *testing.F) {
	f.Add([]byte("\x00alice\x00alice-secret"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parsePlain(data)
		if err != nil {
			if !errors.Is(err, errPlainMalformed) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if m.AuthzID+"\x00"+m.User+"\x00"+m.Password != string(data) {
			t.Fatalf("fields %q %q %q do not rebuild the input", m.AuthzID, m.User, m.Password)
		}
		for _, s := range []string{m.AuthzID, m.User, m.Password} {
			if len(s) > maxPlainField || !utf8.ValidString(s) {
				t.Fatalf("accepted field %q", s)
			}
		}
		if m.User == "" || m.Password == "" {
			t.Fatal("accepted an empty user or password")
		}
	})
}

// FuzzUnframed: raw tokens after a v0 handshake never panic the
// Authenticator, and its state stays coherent: an error ends the exchange
// (no more unframed tokens, not authenticated, the next token is out of
// turn), done means authenticated as a non-empty user, and otherwise it
// waits for the next token.
func FuzzUnframed(f *testing.F) {
	store, err := NewStore([]User{{Name: "alice", Credentials: []string{credFor(f, ScramSHA256, "alice-secret")}}})
	if err != nil {
		f.Fatal(err)
	}
	mechs := []string{Plain, ScramSHA256, ScramSHA512}
	f.Add(uint8(0), []byte("\x00alice\x00alice-secret"), []byte{})
	f.Fuzz(func(t *testing.T, mech uint8, tok1, tok2 []byte) {
		a, err := NewAuthenticator(Options{Mechanisms: mechs, Store: store})
		if err != nil {
			t.Fatal(err)
		}
		if hs := a.Handshake(&kmsg.SASLHandshakeRequest{Version: 0, Mechanism: mechs[int(mech)%len(mechs)]}); hs.ErrorCode != 0 {
			t.Fatalf("handshake: %d", hs.ErrorCode)
		}
		for _, tok := range [][]byte{tok1, tok2} {
			if !a.ExpectUnframed() {
				if _, _, err := a.Unframed(tok); !errors.Is(err, ErrIllegalState) {
					t.Fatalf("token out of turn: %v", err)
				}
				return
			}
			out, done, err := a.Unframed(tok)
			switch {
			case err != nil:
				if !errors.Is(err, ErrAuthenticationFailed) {
					t.Fatalf("error %v is not an authentication failure", err)
				}
				if out != nil || done || a.ExpectUnframed() || a.Authenticated() {
					t.Fatalf("after error: out %q done %v unframed %v authenticated %v", out, done, a.ExpectUnframed(), a.Authenticated())
				}
			case done:
				if !a.Authenticated() || a.User() == "" || a.ExpectUnframed() || out == nil {
					t.Fatalf("done but authenticated %v user %q unframed %v", a.Authenticated(), a.User(), a.ExpectUnframed())
				}
			default:
				if !a.ExpectUnframed() || a.Authenticated() || len(out) == 0 {
					t.Fatalf("in progress but unframed %v authenticated %v, out %q", a.ExpectUnframed(), a.Authenticated(), out)
				}
			}
		}
	})
}
