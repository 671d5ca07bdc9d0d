package auth

import "strings"

// escapeSASLName encodes s as a saslname.
func escapeSASLName(s string) string {
	if !strings.ContainsAny(s, ",=") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ',':
			b.WriteString("=2C")
		case '=':
			b.WriteString("=3D")
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
