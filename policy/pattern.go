package policy

import (
	"regexp"
	"strings"

	"github.com/kproxy/kproxy/policy/policyconfig"
)

// matcher is a compiled name pattern. Globs are classified at compile time
// so the common shapes ("*", "exact", "prefix*") cost one comparison.
type matcher struct {
	kind   matchKind
	s      string // exact value, prefix, or the whole glob
	re     *regexp.Regexp
	source string // as written, for messages
}

type matchKind uint8

const (
	matchAny matchKind = iota
	matchExact
	matchPrefix
	matchSuffix
	matchGlob
	matchRegexp
)

func compileMatcher(p policyconfig.Pattern, source string) matcher {
	if p.Regexp != nil {
		return matcher{kind: matchRegexp, re: p.Regexp, source: source}
	}
	g := p.Glob
	m := matcher{s: g, source: source}
	wild := strings.IndexAny(g, "*?")
	switch {
	case g == "*":
		m.kind = matchAny
	case wild < 0:
		m.kind = matchExact
	case wild == len(g)-1 && g[wild] == '*':
		m.kind, m.s = matchPrefix, g[:wild]
	case g[0] == '*' && !strings.ContainsAny(g[1:], "*?"):
		m.kind, m.s = matchSuffix, g[1:]
	default:
		m.kind = matchGlob
	}
	return m
}

// parseMatchers compiles patterns already checked by config validation.
func parseMatchers(patterns []string) ([]matcher, error) {
	ms := make([]matcher, 0, len(patterns))
	for _, s := range patterns {
		p, err := policyconfig.ParsePattern(s)
		if err != nil {
			return nil, err
		}
		ms = append(ms, compileMatcher(p, s))
	}
	return ms, nil
}

func (m *matcher) match(s string) bool {
	switch m.kind {
	case matchAny:
		return true
	case matchExact:
		return s == m.s
	case matchPrefix:
		return strings.HasPrefix(s, m.s)
	case matchSuffix:
		return strings.HasSuffix(s, m.s)
	case matchGlob:
		return globMatch(m.s, s)
	}
	return m.re.MatchString(s)
}

// matchesEverything reports whether m matches every name, as Kafka's
// wildcard resource pattern does.
func (m *matcher) matchesEverything() bool { return m.kind == matchAny }

func anyMatch(ms []matcher, s string) bool {
	for i := range ms {
		if ms[i].match(s) {
			return true
		}
	}
	return false
}

// globMatch matches s against a glob where '*' is any run of bytes and '?'
// any one byte. It is the linear greedy algorithm with one backtrack point,
// so hostile names cannot make it slow.
func globMatch(glob, s string) bool {
	gi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case gi < len(glob) && (glob[gi] == '?' || glob[gi] == s[si]):
			gi++
			si++
		case gi < len(glob) && glob[gi] == '*':
			star, mark = gi, si
			gi++
		case star >= 0:
			gi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for gi < len(glob) && glob[gi] == '*' {
		gi++
	}
	return gi == len(glob)
}
