package policy

import "github.com/kproxy/kproxy/policy/policyconfig"

// NamePattern is a compiled name pattern in the policy's syntax (a glob,
// or re:EXPR), for other features that select topics as rules do.
type NamePattern struct{ m matcher }

// CompileNamePattern compiles a pattern as a rule would write it.
func CompileNamePattern(s string) (NamePattern, error) {
	p, err := policyconfig.ParsePattern(s)
	if err != nil {
		return NamePattern{}, err
	}
	return NamePattern{m: compileMatcher(p, s)}, nil
}

// Match reports whether name matches the pattern.
func (p NamePattern) Match(name string) bool { return p.m.match(name) }
