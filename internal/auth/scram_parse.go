package auth

import (
	"errors"
	"fmt"
	"strings"
)

// errScramMalformed is the cause of every SCRAM parse failure. Messages
// name the attribute that is wrong, never its value.
var errScramMalformed = errors.New("malformed SCRAM message")

// errChannelBinding: the client asked for channel binding ("p="), which
// Kafka's SCRAM does not offer.
var errChannelBinding = errors.New("channel binding is not supported")

// scramClientFirst is a parsed client-first-message (RFC 5802 section 7).
type scramClientFirst struct {
	// GS2Header is the raw gs2-header including its trailing comma; the
	// client must echo it, base64-encoded, in the client-final message.
	GS2Header string
	AuthzID   string // unescaped; "" when absent
	User      string // unescaped
	Nonce     string
	// Bare is client-first-message-bare, part of the AuthMessage.
	Bare string
	// Extensions are attributes after the nonce, such as Kafka's
	// tokenauth (KIP-48).
	Extensions map[string]string
}

// parseScramClientFirst parses
//
//	gs2-cbind-flag "," [ "a=" saslname ] "," [ "m=" ext "," ] "n=" saslname "," "r=" nonce [ "," extensions ]
//
// accepting the channel-binding flags "n" and "y" only. A mandatory
// extension ("m=") is rejected, as RFC 5802 requires of a server that
// understands none.
func parseScramClientFirst(msg []byte) (scramClientFirst, error) {
	var cf scramClientFirst
	s := string(msg)
	flag, rest, ok := strings.Cut(s, ",")
	if !ok {
		return cf, fmt.Errorf("%w: no gs2 header", errScramMalformed)
	}
	switch {
	case flag == "n" || flag == "y":
	case strings.HasPrefix(flag, "p="):
		return cf, errChannelBinding
	default:
		return cf, fmt.Errorf("%w: channel binding flag must be n or y", errScramMalformed)
	}
	authz, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return cf, fmt.Errorf("%w: gs2 header not terminated", errScramMalformed)
	}
	if authz != "" {
		v, ok := strings.CutPrefix(authz, "a=")
		if !ok {
			return cf, fmt.Errorf("%w: gs2 authorization id must start with a=", errScramMalformed)
		}
		name, err := unescapeSASLName(v)
		if err != nil {
			return cf, fmt.Errorf("%w: authorization id: %w", errScramMalformed, err)
		}
		cf.AuthzID = name
	}
	cf.GS2Header = s[:len(s)-len(bare)]
	cf.Bare = bare

	attrs := strings.Split(bare, ",")
	if strings.HasPrefix(attrs[0], "m=") {
		return cf, fmt.Errorf("%w: mandatory extension (m=) not supported", errScramMalformed)
	}
	if len(attrs) < 2 {
		return cf, fmt.Errorf("%w: client-first message needs n= and r=", errScramMalformed)
	}
	v, ok := strings.CutPrefix(attrs[0], "n=")
	if !ok {
		return cf, fmt.Errorf("%w: client-first message must start with n=", errScramMalformed)
	}
	user, err := unescapeSASLName(v)
	if err != nil {
		return cf, fmt.Errorf("%w: user name: %w", errScramMalformed, err)
	}
	cf.User = user
	nonce, ok := strings.CutPrefix(attrs[1], "r=")
	if !ok {
		return cf, fmt.Errorf("%w: r= must follow n=", errScramMalformed)
	}
	if !printable(nonce) {
		return cf, fmt.Errorf("%w: client nonce empty or not printable", errScramMalformed)
	}
	cf.Nonce = nonce
	if cf.Extensions, err = parseExtensions(attrs[2:]); err != nil {
		return cf, err
	}
	return cf, nil
}

// scramClientFinal is a parsed client-final-message.
type scramClientFinal struct {
	// ChannelBinding is the decoded c= attribute: for flags n and y, the
	// gs2 header of the client-first message.
	ChannelBinding []byte
	Nonce          string
	Proof          []byte
	// WithoutProof is client-final-message-without-proof, part of the
	// AuthMessage.
	WithoutProof string
}

// parseScramClientFinal parses
//
//	"c=" base64 "," "r=" nonce [ "," extensions ] "," "p=" base64
func parseScramClientFinal(msg []byte) (scramClientFinal, error) {
	var cf scramClientFinal
	s := string(msg)
	attrs := strings.Split(s, ",")
	if len(attrs) < 3 {
		return cf, fmt.Errorf("%w: client-final message needs c=, r= and p=", errScramMalformed)
	}
	v, ok := strings.CutPrefix(attrs[0], "c=")
	if !ok {
		return cf, fmt.Errorf("%w: client-final message must start with c=", errScramMalformed)
	}
	cb, err := decodeBase64(v)
	if err != nil {
		return cf, fmt.Errorf("%w: c= is not base64", errScramMalformed)
	}
	cf.ChannelBinding = cb
	if cf.Nonce, ok = strings.CutPrefix(attrs[1], "r="); !ok {
		return cf, fmt.Errorf("%w: r= must follow c=", errScramMalformed)
	}
	last := attrs[len(attrs)-1]
	p, ok := strings.CutPrefix(last, "p=")
	if !ok {
		return cf, fmt.Errorf("%w: client-final message must end with p=", errScramMalformed)
	}
	if cf.Proof, err = decodeBase64(p); err != nil {
		return cf, fmt.Errorf("%w: p= is not base64", errScramMalformed)
	}
	if _, err := parseExtensions(attrs[2 : len(attrs)-1]); err != nil {
		return cf, err
	}
	cf.WithoutProof = s[:len(s)-len(last)-1]
	return cf, nil
}

// parseExtensions reads "key=value" attributes with an alphanumeric key
// and a printable value. Keys must be unique.
func parseExtensions(attrs []string) (map[string]string, error) {
	if len(attrs) == 0 {
		return nil, nil
	}
	ext := make(map[string]string, len(attrs))
	for _, a := range attrs {
		k, v, ok := strings.Cut(a, "=")
		if !ok || !alnum(k) || (v != "" && !printable(v)) {
			return nil, fmt.Errorf("%w: extension is not key=value", errScramMalformed)
		}
		if _, dup := ext[k]; dup {
			return nil, fmt.Errorf("%w: extension %s repeated", errScramMalformed, k)
		}
		ext[k] = v
	}
	return ext, nil
}

// printable is RFC 5802's printable: non-empty, %x21-7E except ",".
func printable(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == ',' {
			return false
		}
	}
	return true
}

func alnum(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
