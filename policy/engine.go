package policy

import (
	"fmt"
	"slices"

	"github.com/kproxy/kproxy/internal/acl"
	"github.com/kproxy/kproxy/internal/config"
)

// DefaultRule is the Rule of a Decision no rule made.
const DefaultRule = "default"

// Decision is the answer to one authorization question.
type Decision struct {
	Allowed bool
	// Rule names the rule that decided, or DefaultRule.
	Rule string
}

// Engine is a compiled set of rules. It is immutable and safe for
// concurrent use; a reload compiles a new one.
type Engine struct {
	rules        []rule
	defaultAllow bool
	// candidates[rt][op] lists, in file order, the rules that allow or deny
	// op on resources of type rt, so a decision never looks at the others.
	candidates [numResourceTypes][opAll][]int32
	// claimNames are the token claims the rules' principals match on,
	// sorted: the only claims a Subject depends on.
	claimNames []string
}

type rule struct {
	name       string
	principals []principalMatcher
	allow      opMask // with implied operations
	deny       opMask
	patterns   [numResourceTypes][]matcher
}

// Compile builds an Engine from a validated policy section. Errors are
// only possible for a policy that skipped config validation.
func Compile(p config.Policy) (*Engine, error) {
	e := &Engine{defaultAllow: p.Default == config.PolicyDefaultAllow}
	for i, r := range p.Rules {
		cr, err := compileRule(r)
		if err != nil {
			return nil, fmt.Errorf("policy.rules[%d] (%s): %w", i, r.Name, err)
		}
		e.rules = append(e.rules, cr)
		for _, pm := range cr.principals {
			if pm.kind == config.PrincipalClaim && !slices.Contains(e.claimNames, pm.claim) {
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

func compileRule(r config.Rule) (rule, error) {
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
func (e *Engine) Rules() int { return len(e.rules) }

// Decide answers whether principal may perform op on the resource of type
// rt named name. Requests that ask several questions should use Subject.
func (e *Engine) Decide(principal Principal, op Operation, rt ResourceType, name string) Decision {
	s := e.Subject(&principal)
	return s.Decide(op, rt, name)
}

// Subject is an Engine narrowed to one principal: which rules name it is
// worked out once, so each decision only matches resource patterns. It is
// immutable once built.
type Subject struct {
	e *Engine
	// applies is a bitset over e.rules; inline holds it for up to 256
	// rules so that the common case does not allocate.
	inline  [4]uint64
	applies []uint64
	// list holds the same rules as indices, in file order: when fewer rules
	// name the principal than could decide a question, a decision walks
	// these instead of the candidates.
	list []int32
}

// Subject returns the engine's view for principal.
func (e *Engine) Subject(p *Principal) Subject {
	s := Subject{e: e}
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

func (s *Subject) set(i int) {
	if s.applies != nil {
		s.applies[i/64] |= 1 << (i % 64)
		return
	}
	s.inline[i/64] |= 1 << (i % 64)
}

func (s *Subject) has(i int32) bool {
	if s.applies != nil {
		return s.applies[i/64]&(1<<(i%64)) != 0
	}
	return s.inline[i/64]&(1<<(i%64)) != 0
}

// RulesApplying is how many rules name this subject's principal.
func (s *Subject) RulesApplying() int { return len(s.list) }

// rulesFor returns, in file order, rules that may decide op on rt for this
// subject, and whether each still needs the principal check: whichever of
// the principal's rules and the question's candidates is shorter.
func (s *Subject) rulesFor(op Operation, rt ResourceType) ([]int32, bool) {
	cands := s.e.candidates[rt][op]
	if len(s.list) < len(cands) {
		return s.list, false
	}
	return cands, true
}

// Decide answers whether the subject may perform op on the resource of
// type rt named name. A matching deny wins over any allow; the first
// matching allow names the decision; without either, the default decides.
func (s *Subject) Decide(op Operation, rt ResourceType, name string) Decision {
	return s.decide(op, rt, name, nil)
}

// decide is Decide, and, with tr set, also records what each rule did:
// the one decision both the data path and explain use. With tr nil it
// looks only at the rules that can decide and stops at the first deny;
// with tr set it looks at every rule, which changes what is recorded but
// not the answer (the candidates are every rule that could match, in file
// order).
func (s *Subject) decide(op Operation, rt ResourceType, name string, tr *Trace) Decision {
	if op == 0 || op >= opAll || rt >= numResourceTypes {
		return Decision{Rule: DefaultRule}
	}
	bit := maskOf(op)
	allowedBy := int32(-1)
	rules, checkPrincipal := s.rulesFor(op, rt)
	if tr != nil {
		rules, checkPrincipal = tr.start(len(s.e.rules)), true
	}
	for _, i := range rules {
		if checkPrincipal && !s.has(i) {
			tr.set(i, OutcomePrincipal)
			continue
		}
		r := &s.e.rules[i]
		if (r.allow|r.deny)&bit == 0 {
			tr.set(i, OutcomeOperation)
			continue // silent on op
		}
		if r.deny&bit == 0 && allowedBy >= 0 && tr == nil {
			continue // another allow cannot change the answer
		}
		if !anyMatch(r.patterns[rt], name) {
			tr.set(i, OutcomeResource)
			continue
		}
		if r.deny&bit != 0 {
			if tr == nil {
				return Decision{Allowed: false, Rule: r.name}
			}
			tr.deny(i) // the first deny decides, once every rule is recorded
			continue
		}
		tr.set(i, OutcomeAllow)
		if allowedBy < 0 {
			allowedBy = i
		}
	}
	if tr != nil && tr.Decider >= 0 {
		return Decision{Allowed: false, Rule: s.e.rules[tr.Decider].name}
	}
	if allowedBy >= 0 {
		tr.decided(allowedBy)
		return Decision{Allowed: true, Rule: s.e.rules[allowedBy].name}
	}
	return Decision{Allowed: s.e.defaultAllow, Rule: DefaultRule}
}

// DecideAny answers whether the subject may perform op on some resource of
// type rt, as Kafka's authorizeByResourceType does (InitProducerId without
// a transactional id is allowed to any principal that may write some
// topic): true if a rule allows op on some pattern of that type and no
// rule denies op on every name of it (a "*" pattern), or if the default
// allows and nothing denies everything.
func (s *Subject) DecideAny(op Operation, rt ResourceType) Decision {
	bit := maskOf(op)
	allowedBy := int32(-1)
	rules, checkPrincipal := s.rulesFor(op, rt)
	for _, i := range rules {
		if checkPrincipal && !s.has(i) {
			continue
		}
		r := &s.e.rules[i]
		if (r.allow|r.deny)&bit == 0 || len(r.patterns[rt]) == 0 {
			continue
		}
		if r.deny&bit != 0 {
			for j := range r.patterns[rt] {
				if r.patterns[rt][j].matchesEverything() {
					return Decision{Allowed: false, Rule: r.name}
				}
			}
			continue
		}
		if allowedBy < 0 {
			allowedBy = i
		}
	}
	if allowedBy >= 0 {
		return Decision{Allowed: true, Rule: s.e.rules[allowedBy].name}
	}
	return Decision{Allowed: s.e.defaultAllow, Rule: DefaultRule}
}
