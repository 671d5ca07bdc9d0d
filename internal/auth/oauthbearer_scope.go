package auth

import (
	"errors"
	"fmt"
	"strings"
)

// errScope is a scope claim that is not a list of RFC 6749 scope tokens.
var errScope = errors.New("malformed scope")

// ParseScope splits a scope string as RFC 6749 section 3.3 defines it:
// scope-tokens of NQCHAR (%x21 / %x23-5B / %x5D-7E) separated by U+0020
// only. A tab, a no-break space or any other character outside NQCHAR
// separates nothing: the scope holding it is refused, so that no two
// readers of one token can see different scopes. Empty tokens (repeated,
// leading or trailing spaces) are skipped, as Kafka's
// OAuthBearerScopeUtils.ParseScope does.
func ParseScope(scope string) ([]string, error) {
	var out []string
	for tok := range strings.SplitSeq(scope, " ") {
		if tok == "" {
			continue
		}
		if err := CheckScopeToken(tok); err != nil {
			return nil, err
		}
		out = append(out, tok)
	}
	return out, nil
}

// CheckScopeToken refuses a scope-token with a character outside NQCHAR.
func CheckScopeToken(tok string) error {
	if tok == "" {
		return fmt.Errorf("%w: an empty scope", errScope)
	}
	for i := range len(tok) {
		if c := tok[i]; c < 0x21 || c == '"' || c == '\\' || c > 0x7e {
			return fmt.Errorf("%w: scope %q has the byte 0x%02x, outside RFC 6749's NQCHAR", errScope, clip(tok), c)
		}
	}
	return nil
}
