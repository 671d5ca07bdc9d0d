package tenant

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// Regex subscriptions (KIP-848 SubscribedTopicRegex, ListTransactions'
// TransactionalIDPattern) are matched by the broker against whole names
// with RE2J. A tenant's regex R goes upstream as
//
//	QuoteMeta(prefix) + "(?:" + canonical(R) + ")"
//
// where canonical(R) is R parsed by Go's RE2 parser (of which RE2J is a
// port) and printed back: the broker then matches prefix followed by a
// whole match of R, so only the tenant's names. R is never pasted as
// text: a regex the parser rejects (an unbalanced ")|(.*" that would close
// the group and alternate out of the prefix) is refused, and the printed
// form has no \Q...\E, no comments and no construct the two parsers could
// read differently. Anchors inside the group cannot escape it: ^ and \A
// match only at the start of the name, which the prefix has already
// consumed, so a leading ^ or \A (the tenant's names start after the
// prefix) is taken off: "^orders$" matches the tenant's orders, as it would
// on a cluster of its own. Any other anchor stays and matches nothing, never
// outside the group.

// upRegex is the upstream regex of the tenant's regex re under prefix.
func upRegex(prefix, re string) (string, error) {
	if prefix == "" {
		return re, nil
	}
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return "", fmt.Errorf("tenant: regular expression: %w", err)
	}
	return regexWrapOpen(prefix) + withoutLeadingAnchors(parsed).String() + ")", nil
}

// withoutLeadingAnchors is re without the begin-of-text and begin-of-line
// anchors that can only match where re starts matching.
func withoutLeadingAnchors(re *syntax.Regexp) *syntax.Regexp {
	switch re.Op {
	case syntax.OpBeginText, syntax.OpBeginLine:
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	case syntax.OpConcat:
		for i := 0; i < len(re.Sub); i++ {
			re.Sub[i] = withoutLeadingAnchors(re.Sub[i])
			if re.Sub[i].Op != syntax.OpEmptyMatch {
				break
			}
		}
	case syntax.OpAlternate:
		for i := range re.Sub {
			re.Sub[i] = withoutLeadingAnchors(re.Sub[i])
		}
	case syntax.OpCapture:
		re.Sub[0] = withoutLeadingAnchors(re.Sub[0])
	}
	return re
}

// downRegex is the tenant's regex of an upstream regex: the tenant's own
// of one upRegex made, the rest of one that starts with the quoted prefix
// (a member that joined the upstream group directly); false for any other.
func downRegex(prefix, re string) (string, bool) {
	if prefix == "" {
		return re, true
	}
	if inner, ok := strings.CutPrefix(re, regexWrapOpen(prefix)); ok {
		if inner, ok := strings.CutSuffix(inner, ")"); ok {
			return inner, true
		}
	}
	rest, ok := strings.CutPrefix(re, regexp.QuoteMeta(prefix))
	return rest, ok && rest != ""
}

func regexWrapOpen(prefix string) string { return regexp.QuoteMeta(prefix) + "(?:" }
