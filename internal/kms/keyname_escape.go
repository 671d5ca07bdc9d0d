package kms

// Topic and virtual cluster names are made of [a-zA-Z0-9._-]; AWS KMS
// alias names of [a-zA-Z0-9/_-]. EscapeKeyName maps the first onto the
// second one to one, so that two topics never share a key name:
//
//	'.'  -> '-'    payments.cards -> payments-cards
//	'-'  -> "_-"   payments-cards -> payments_-cards
//	'_'  -> "__"   payments_cards -> payments__cards
//	any other byte outside [a-zA-Z0-9] -> '_' and two lowercase hex digits
//	                                      ('/' -> "_2f")
//
// Letters and digits stay. '_' always starts a two- or three-byte escape
// and a bare '-' is always a '.', so the mapping can be undone and is
// injective; its output never holds '/', which therefore safely separates
// a substituted name from what follows it in a template.

// EscapeKeyName maps a topic or virtual cluster name into key name syntax.
func EscapeKeyName(s string) string { return string(AppendEscapedKeyName(nil, s)) }

// AppendEscapedKeyName appends EscapeKeyName(s) to dst.
func AppendEscapedKeyName(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isAlnum(c):
			dst = append(dst, c)
		case c == '.':
			dst = append(dst, '-')
		case c == '-', c == '_':
			dst = append(dst, '_', c)
		default:
			dst = append(dst, '_', hex[c>>4], hex[c&0xf])
		}
	}
	return dst
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isKeyNameByte: what AWS allows in an alias name.
func isKeyNameByte(r rune) bool {
	return r < 0x80 && (isAlnum(byte(r)) || r == '/' || r == '_' || r == '-')
}
