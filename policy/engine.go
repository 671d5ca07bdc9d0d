package policy

import (
	"fmt"
	"slices"

	"github.com/kproxy/kproxy/internal/acl"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// DefaultRule is the Rule of a Decision no rule made.
const DefaultRule = "default"

// Decision is the answer to one authorization question.
type Decision struct {
	Allowed bool
	// Rule names the rule that decided, or DefaultRule.
	Rule string
}

// ruleEngine is a compiled set of rules. It is immutable and safe for
// concurrent use; a reload compiles a new one.
type ruleEngine struct {
	rules        []rule
	defaultAllow bool
	// candidates[rt][op] lists, in file order, the rules that allow or deny
	// op on resources of type rt, so a decision never looks at the others.
	candidates [numResourceTypes][opAll][]int32
	// claimNames are the token claims the rules' principals match on,
	// sorted: the only claims a ruleSubject depends on.
	claimNames []string
}

type rule struct {
	name       string
	principals []principalMatcher
	allow      opMask // with implied operations
	deny       opMask
	patterns   [numResourceTypes][]matcher
}

// compileRules builds a ruleEngine from a validated policy section. Errors are
// only possible for a policy that skipped config validation.
func compileRules(p policyconfig.Policy) (*ruleEngine, error) {
	e := &ruleEngine{defaultAllow: p.Default == policyconfig.PolicyDefaultAllow}
	for i, r := range p.Rules {
		cr, err := compileRule(r)
		if err != nil {
			return nil, fmt.Errorf("policy.rules[%d] (%s): %w", i, r.Name, err)
		}
		e.rules = append(e.rules, cr)
		for _, pm := range cr.principals {
			if pm.kind == policyconfig.PrincipalClaim && !slices.Contains(e.claimNames, pm.claim) {
				e.claimNames = append(e.claimNames, pm.claim)
			}
		}
	}
	slices.Sort(e.claimNames)
	for i := range e.rules {
		r := &e.rules[i]
		for rt := ResourceType(0); rt < numResourceTypes; rt++ {
			if len(r.patterns[rt]) == 0 {
				continue
			}
			for op := OpRead; op < opAll; op++ {
				if (r.allow|r.deny)&maskOf(op) != 0 {
					e.candidates[rt][op] = append(e.candidates[rt][op], int32(i))
				}
			}
		}
	}
	return e, nil
}

func compileRule(r policyconfig.Rule) (rule, error) {
	cr := rule{name: r.Name}
	var err error
	if cr.principals, err = compilePrincipals(r.Principals); err != nil {
		return cr, err
	}
	var allow, deny opMask
	for _, lst := range []struct {
		names []string
		mask  *opMask
	}{{r.Allow, &allow}, {r.Deny, &deny}} {
		for _, s := range lst.names {
			op, ok := acl.ParseOperation(s)
			if !ok {
				return cr, fmt.Errorf("%q is not an operation", s)
			}
			*lst.mask |= maskOf(op)
		}
	}
	cr.allow, cr.deny = allow.withImplied(), deny.denyMask()
	for _, rt := range acl.ResourceTypes() {
		if cr.patterns[rt], err = parseMatchers(r.Patterns(rt)); err != nil {
			return cr, err
		}
	}
	if r.Cluster {
		cr.patterns[ResCluster] = []matcher{{kind: matchAny, source: "cluster"}}
	}
	return cr, nil
}

// Rules is how many rules the engine holds.
func (e *ruleEngine) Rules() int { return len(e.rules) }

// Decide answers whether principal may perform op on the resource of type
// rt named name. Requests that ask several questions should use ruleSubject.
func (e *ruleEngine) Decide(principal Principal, op Operation, rt ResourceType, name string) Decision {
	s := e.subjectOf(&principal)
	return s.Decide(op, rt, name)
}

// ruleSubject is a ruleEngine narrowed to one principal: which rules name it is
// worked out once, so each decision only matches resource patterns. It is
// immutable once built.
type ruleSubject struct {
	e *ruleEngine
	// applies is a bitset over e.rules; inline holds it for up to 256
	// rules so that the common case does not allocate.
	inline  [4]uint64
	applies []uint64
	// list holds the same rules as indices, in file order: when fewer rules
	// name the principal than could decide a question, a decision walks
	// these instead of the candidates.
	list []int32
}

// subjectOf returns the engine's view for principal.
func (e *ruleEngine) subjectOf(p *Principal) ruleSubject {
	s := ruleSubject{e: e}
	words := (len(e.rules) + 63) / 64
	if words > len(s.inline) {
		s.applies = make([]uint64, words)
	}
	for i := range e.rules {
		if anyPrincipal(e.rules[i].principals, p) {
			s.set(i)
			s.list = append(s.list, int32(i))
		}
	}
	return s
}

func (s *ruleSubject) set(i int) {
	if s.applies != nil {
		s.applies[i/64] |= 1 << (i % 64)
		return
	}
	s.inline[i/64] |= 1 << (i % 64)
}

func (s *ruleSubject) has(i int32) bool {
	if s.applies != nil {
		return s.applies[i/64]&(1<<(i%64)) != 0
	}
	return s.inline[i/64]&(1<<(i%64)) != 0
}

// RulesApplying is how many rules name this subject's principal.
func (s *ruleSubject) RulesApplying() int { return len(s.list) }

// rulesFor returns, in file order, rules that may decide op on rt for this
// subject, and whether each still needs the principal check: whichever of
// the principal's rules and the question's candidates is shorter.
func (s *ruleSubject) rulesFor(op Operation, rt ResourceType) ([]int32, bool) {
	cands := s.e.candidates[rt][op]
	if len(s.list) < len(cands) {
		return s.list, false
	}
	return cands, true
}
