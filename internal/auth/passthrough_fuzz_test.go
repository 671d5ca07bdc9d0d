package auth

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// brokerReading is what an Apache Kafka broker makes of a first client
// message, by a second, independent reading of its grammar (a hand-written
// scanner here, a translation of Kafka's regular expression in
// passthrough.go): ok when the broker's grammar accepts it, the user it
// authenticates (before any authorization-id check), the raw authorization
// id, and whether it is a delegation token.
type brokerReading struct {
	ok        bool
	user      string
	authzID   string
	tokenAuth bool
}

// kafkaPlainReading follows PlainSaslServer.extractTokens: split at the
// first NULs into at most four tokens, exactly three wanted; user and
// password non-empty.
func kafkaPlainReading(msg string) brokerReading {
	var tokens []string
	start := 0
	for i := 0; i < 4; i++ {
		end := strings.IndexByte(msg[start:], 0)
		if end < 0 {
			tokens = append(tokens, msg[start:])
			break
		}
		tokens = append(tokens, msg[start:start+end])
		start += end + 1
	}
	if len(tokens) != 3 || tokens[1] == "" || tokens[2] == "" {
		return brokerReading{}
	}
	return brokerReading{ok: true, user: tokens[1], authzID: tokens[0]}
}

// kafkaScramReading scans ScramMessages.ClientFirstMessage's grammar
//
//	"n," ["a=" saslname] "," ["m=" value ","] "n=" saslname "," "r=" printable *("," alpha "=" value)
//
// over bytes 0x01-0x7F only, then applies ScramFormatter.username and
// ScramExtensions (Utils.parseMap keeps the last of a repeated key;
// Boolean.parseBoolean ignores case).
func kafkaScramReading(msg string) brokerReading {
	for i := 0; i < len(msg); i++ {
		if msg[i] == 0 || msg[i] > 0x7f {
			return brokerReading{}
		}
	}
	isSASLName := func(s string) bool {
		if s == "" || strings.Contains(s, ",") {
			return false
		}
		for i := 0; i < len(s); i++ {
			if s[i] == '=' {
				if !strings.HasPrefix(s[i:], "=2C") && !strings.HasPrefix(s[i:], "=3D") {
					return false
				}
				i += 2
			}
		}
		return true
	}
	isValue := func(s string) bool { return s != "" && !strings.Contains(s, ",") }
	isPrintable := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] < 0x21 || s[i] > 0x7e || s[i] == ',' {
				return false
			}
		}
		return s != ""
	}
	isAlpha := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if c := s[i] | 0x20; c < 'a' || c > 'z' {
				return false
			}
		}
		return s != ""
	}
	var r brokerReading
	rest, ok := strings.CutPrefix(msg, "n,")
	if !ok {
		return brokerReading{}
	}
	head, rest, ok := strings.Cut(rest, ",")
	if !ok {
		return brokerReading{}
	}
	if head != "" {
		if r.authzID, ok = strings.CutPrefix(head, "a="); !ok || !isSASLName(r.authzID) {
			return brokerReading{}
		}
	}
	if v, after, found := strings.Cut(rest, ","); found && strings.HasPrefix(v, "m=") {
		if !isValue(v[2:]) {
			return brokerReading{}
		}
		rest = after
	}
	attrs := strings.Split(rest, ",")
	if len(attrs) < 2 {
		return brokerReading{}
	}
	name, ok := strings.CutPrefix(attrs[0], "n=")
	if !ok || !isSASLName(name) {
		return brokerReading{}
	}
	if nonce, ok := strings.CutPrefix(attrs[1], "r="); !ok || !isPrintable(nonce) {
		return brokerReading{}
	}
	ext := map[string]string{}
	for _, a := range attrs[2:] {
		k, v, found := strings.Cut(a, "=")
		if !found || !isAlpha(k) || !isValue(v) {
			return brokerReading{}
		}
		ext[k] = v
	}
	r.ok = true
	r.user = strings.ReplaceAll(strings.ReplaceAll(name, "=2C", ","), "=3D", "=")
	r.tokenAuth = strings.EqualFold(ext["tokenauth"], "true")
	return r
}

// FuzzPassthroughUser: in passthrough mode kproxy's principal is the
// broker's or the connection is refused. UserFromClientMessage must agree
// with the independent reading of Kafka's grammar on every input: it
// returns exactly the user the broker authenticates whenever the broker
// would accept the message for that user, and refuses (with
// ErrUnmappablePrincipal) exactly when the broker refuses it or
// authenticates a delegation token, plus, for PLAIN, when the message is
// not UTF-8 (the broker's replacement characters are not guessed).
func FuzzPassthroughUser(f *testing.F) {
	for _, seed := range []string{
		"\x00alice\x00alice-secret",
		"alice\x00alice\x00pw",
		"admin\x00alice\x00pw",
		"\x00alice\x00" + strings.Repeat("p", 300),
		"\x00al\xffice\x00pw",
		"\x00alice\x00pw\x00",
		"n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL",
		"n,,m=x,n=alice,r=abc",
		"n,,m=n=admin,n=alice,r=abc",
		"n,,n=alice,r=abc,n=admin",
		"n,,n=alice,r=abc,k=1,k=2",
		"n,,n=tokenid,r=abc,tokenauth=true",
		"n,,n=tokenid,r=abc,tokenauth=TRUE,x=1",
		"n,,n=bob,r=abc,tokenauth=true,tokenauth=false",
		"n,a=alice,n=alice,r=abc",
		"n,a=admin,n=alice,r=abc",
		"n,a=we=2Cird,n=we=2Cird,r=abc",
		"n,,n=we=2Cird=3Dname,r=abc",
		"y,,n=alice,r=abc",
		"n,,n=jos\u00e9,r=abc",
	} {
		f.Add(uint8(0), []byte(seed))
		f.Add(uint8(1), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, mech uint8, data []byte) {
		mechanism, want := Plain, brokerReading{}
		if mech%2 == 0 {
			if want = kafkaPlainReading(string(data)); want.ok && !utf8.Valid(data) {
				want.ok = false // refused: kproxy does not guess the broker's replacements
			}
		} else {
			mechanism, want = ScramSHA512, kafkaScramReading(string(data))
		}
		// The broker refuses an authorization id other than the user, and
		// kproxy cannot name a token's owner.
		accept := want.ok && (want.authzID == "" || want.authzID == want.user) && !want.tokenAuth
		user, err := UserFromClientMessage(mechanism, data)
		switch {
		case err != nil && !errors.Is(err, ErrUnmappablePrincipal):
			t.Fatalf("%s %q: error %v is not ErrUnmappablePrincipal", mechanism, data, err)
		case accept && err != nil:
			t.Fatalf("%s %q: the broker authenticates %q, kproxy refuses: %v", mechanism, data, want.user, err)
		case !accept && err == nil:
			t.Fatalf("%s %q: kproxy names %q, the broker refuses or authenticates a token (%+v)", mechanism, data, user, want)
		case accept && user != want.user:
			t.Fatalf("%s %q: kproxy names %q, the broker %q", mechanism, data, user, want.user)
		}
		// kproxy's own servers, with their stricter grammar, name the same
		// user whenever both accept a message.
		if mechanism == Plain {
			if m, perr := parsePlain(data); perr == nil && err == nil && m.User != user {
				t.Fatalf("PLAIN %q: own parser names %q, passthrough %q", data, m.User, user)
			}
		} else if cf, perr := parseScramClientFirst(data); perr == nil && err == nil && cf.User != user {
			t.Fatalf("SCRAM %q: own parser names %q, passthrough %q", data, cf.User, user)
		}
	})
}
