package auth

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// OAuthBearer is the SASL mechanism name of RFC 7628 / KIP-255.
const OAuthBearer = "OAUTHBEARER"

// oauthClientFirst is a parsed OAUTHBEARER client-first message:
//
//	gs2-header %x01 *(key "=" value %x01) %x01
//
// with the gs2-header "n," [ "a=" saslname ] "," and exactly one key
// "auth" whose value is "Bearer " and the token (RFC 7628 section 3.1).
// The other pairs are SASL extensions (KIP-342).
type oauthClientFirst struct {
	AuthzID    string
	Token      string
	Extensions map[string]string
}

// errOAuthMalformed is the cause of every OAUTHBEARER parse failure; the
// error says what is wrong, never what the message holds, since it holds a
// bearer token.
var errOAuthMalformed = errors.New("malformed OAUTHBEARER client-first message")

// maxOAuthExtensions bounds the extensions one message may carry: Kafka
// clients send a handful at most, and each becomes a map entry.
const maxOAuthExtensions = 32

// parseOAuthClientFirst reads msg with the grammar of Kafka's
// OAuthBearerClientInitialResponse, which is RFC 7628's restricted to what
// a broker accepts: the gs2 flag must be "n" (kproxy, like Kafka, offers no
// channel binding, so "y" and "p=" are refused), keys are letters only,
// values printable ASCII plus space and tab/CR/LF, the auth scheme is
// "Bearer" (any case) and the token is base64url characters and dots, as a
// JWS compact serialization is.
func parseOAuthClientFirst(msg []byte) (oauthClientFirst, error) {
	bad := func(format string, args ...any) (oauthClientFirst, error) {
		return oauthClientFirst{}, fmt.Errorf("%w: %s", errOAuthMalformed, fmt.Sprintf(format, args...))
	}
	rest, ok := bytes.CutPrefix(msg, []byte("n,"))
	if !ok {
		return bad("the gs2 header must start with \"n,\" (no channel binding)")
	}
	header, rest, ok := bytes.Cut(rest, []byte{','})
	if !ok {
		return bad("the gs2 header does not end with \",\"")
	}
	var out oauthClientFirst
	if len(header) > 0 {
		name, ok := bytes.CutPrefix(header, []byte("a="))
		if !ok {
			return bad("the gs2 header's second field is not an authorization id (a=)")
		}
		id, err := unescapeSASLName(string(name))
		if err != nil || !asciiSASLName(id) {
			return bad("the authorization id is not a saslname")
		}
		out.AuthzID = id
	}
	rest, ok = bytes.CutPrefix(rest, []byte{0x01})
	if !ok {
		return bad("no %%x01 after the gs2 header")
	}
	body, ok := bytes.CutSuffix(rest, []byte{0x01})
	if !ok || (len(body) > 0 && body[len(body)-1] != 0x01) {
		return bad("the key/value pairs do not end with %%x01%%x01")
	}
	pairs := bytes.Split(body, []byte{0x01})
	pairs = pairs[:len(pairs)-1] // the empty string after the last separator
	out.Extensions = map[string]string{}
	sawAuth := false
	for i, pair := range pairs {
		key, value, ok := bytes.Cut(pair, []byte{'='})
		switch {
		case !ok:
			return bad("pair %d has no \"=\"", i)
		case !oauthKey(key):
			return bad("pair %d: a key must be one or more ASCII letters", i)
		case !oauthValue(value):
			return bad("pair %d (%s): the value must be printable ASCII, space, tab, CR or LF", i, key)
		}
		k := string(key)
		if k == "auth" {
			if sawAuth {
				return bad("auth given twice")
			}
			sawAuth = true
			token, err := bearerToken(string(value))
			if err != nil {
				return bad("%v", err)
			}
			out.Token = token
			continue
		}
		if _, dup := out.Extensions[k]; dup {
			return bad("extension %s given twice", k)
		}
		if len(out.Extensions) == maxOAuthExtensions {
			return bad("more than %d extensions", maxOAuthExtensions)
		}
		out.Extensions[k] = string(value)
	}
	if !sawAuth {
		return bad("no auth pair")
	}
	return out, nil
}

// bearerToken reads "Bearer TOKEN" (RFC 6750 section 2.1, scheme matched
// case-insensitively, one or more spaces).
func bearerToken(auth string) (string, error) {
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", errors.New("auth is not \"Bearer <token>\"")
	}
	token = strings.TrimLeft(token, " ")
	if token == "" {
		return "", errors.New("empty bearer token")
	}
	for i := range len(token) {
		if c := token[i]; !(isAlnum(c) || c == '-' || c == '_' || c == '.') {
			return "", errors.New("the bearer token has characters outside base64url and \".\"")
		}
	}
	return token, nil
}

// asciiSASLName is Kafka's SASLNAME restriction on an unescaped authzid:
// ASCII without NUL (its regex is [\x01-\x7F] less "=" and ",", escapes
// allowed).
func asciiSASLName(s string) bool {
	for i := range len(s) {
		if s[i] == 0 || s[i] > 0x7f {
			return false
		}
	}
	return true
}

func oauthKey(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// oauthValue is RFC 7628's value: %x21-7E / SP / HTAB / CR / LF, at least
// one.
func oauthValue(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	for _, c := range v {
		if !(c >= 0x21 && c <= 0x7e || c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
