package config

import "strings"

// HostName is how kproxy compares host names a peer chooses (the TLS
// server name): the name lower-cased in ASCII, and ok true only for a DNS
// host name of ASCII letters, digits, hyphens and dots (RFC 1123 labels,
// as RFC 6066 requires of a server name). Anything else, such as a name
// with a non-ASCII byte (the Kelvin sign U+212A, which Unicode case
// folding equates with "k"), an empty label or a trailing dot, matches
// nothing.
//
// It allocates only for a name with an upper-case letter.
func HostName(name string) (folded string, ok bool) {
	if !validHostName(name) {
		return "", false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; 'A' <= c && c <= 'Z' {
			return lowerASCII(name), true
		}
	}
	return name, true
}

// SameHostName reports whether a and b are one host name: both valid (see
// HostName) and equal up to ASCII case.
func SameHostName(a, b string) bool {
	fa, ok := HostName(a)
	if !ok {
		return false
	}
	fb, ok := HostName(b)
	return ok && fa == fb
}

// lowerASCII lower-cases the ASCII letters of s and nothing else.
func lowerASCII(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// validHostName reports whether h is a DNS host name of ASCII letters,
// digits, hyphens and dots (what a TLS server name may be).
func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
