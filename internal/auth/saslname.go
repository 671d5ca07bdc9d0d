package auth

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// SCRAM carries names as saslname (RFC 5802 section 5.1): "," is sent as
// "=2C" and "=" as "=3D", and any other "=" is invalid.

var errBadSASLName = errors.New("invalid saslname")

// unescapeSASLName decodes a saslname, which must be non-empty UTF-8 with
// no NUL and no "," or "=" other than the two escapes.
func unescapeSASLName(s string) (string, error) {
	if s == "" || !utf8.ValidString(s) {
		return "", errBadSASLName
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 0, ',':
			return "", errBadSASLName
		case '=':
			switch {
			case strings.HasPrefix(s[i:], "=2C"):
				b.WriteByte(',')
			case strings.HasPrefix(s[i:], "=3D"):
				b.WriteByte('=')
			default:
				return "", errBadSASLName
			}
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
