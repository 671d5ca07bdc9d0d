package policy

// The rule loop: every decision, on the data path and in explain, is one
// walk of the rules that can decide it (decide). What differs between the
// questions is only how a rule's patterns for the resource type answer it.

// scope is what a question asks about: one named resource, some resource
// of the type, or every resource of the type.
type scope uint8

const (
	scopeName scope = iota
	scopeSome
	scopeEvery
)

// question is one decision to make: may the subject perform op on rt's
// resources in scope (named name for scopeName)?
type question struct {
	op    Operation
	rt    ResourceType
	name  string
	scope scope
}

// denies says whether a deny rule with patterns ps decides q: it names
// the resource, names every resource (for some resource to remain), or
// names any resource (for every resource to be allowed).
func (q *question) denies(ps []matcher) bool {
	switch q.scope {
	case scopeSome:
		return anyMatchesEverything(ps)
	case scopeEvery:
		return len(ps) > 0
	}
	return anyMatch(ps, q.name)
}

// allows says whether an allow rule with patterns ps answers q: it names
// the resource, names some resource, or names every resource.
func (q *question) allows(ps []matcher) bool {
	switch q.scope {
	case scopeSome:
		return len(ps) > 0
	case scopeEvery:
		return anyMatchesEverything(ps)
	}
	return anyMatch(ps, q.name)
}

func anyMatchesEverything(ps []matcher) bool {
	for i := range ps {
		if ps[i].matchesEverything() {
			return true
		}
	}
	return false
}

// Decide answers whether the subject may perform op on the resource of
// type rt named name. A matching deny wins over any allow; the first
// matching allow names the decision; without either, the default decides.
func (s *ruleSubject) Decide(op Operation, rt ResourceType, name string) Decision {
	return s.decide(&question{op: op, rt: rt, name: name}, nil)
}

// DecideAny answers whether the subject may perform op on some resource of
// type rt, as Kafka's authorizeByResourceType does (InitProducerId without
// a transactional id is allowed to any principal that may write some
// topic): true if a rule allows op on some pattern of that type and no
// rule denies op on every name of it (a "*" pattern), or if the default
// allows and nothing denies everything.
func (s *ruleSubject) DecideAny(op Operation, rt ResourceType) Decision {
	return s.decide(&question{op: op, rt: rt, scope: scopeSome}, nil)
}

// DecideEvery answers whether the subject may perform op on every resource
// of type rt, whatever its name: some rule allows op on a "*" pattern (or
// the default allows) and no rule denies op on any pattern of that type.
// It decides what a request whose resources the broker chooses (a regex
// subscription) may be given.
func (s *ruleSubject) DecideEvery(op Operation, rt ResourceType) Decision {
	return s.decide(&question{op: op, rt: rt, scope: scopeEvery}, nil)
}

// decide answers q and, with tr set, also records what each rule did: the
// one decision both the data path and explain use. With tr nil it looks
// only at the rules that can decide and stops at the first deny; with tr
// set it looks at every rule, which changes what is recorded but not the
// answer (the candidates are every rule that could match, in file order).
func (s *ruleSubject) decide(q *question, tr *ruleTrace) Decision {
	if q.op == 0 || q.op >= opAll || q.rt >= numResourceTypes {
		return Decision{Rule: DefaultRule}
	}
	bit := maskOf(q.op)
	allowedBy := int32(-1)
	rules, checkPrincipal := s.rulesFor(q.op, q.rt)
	if tr != nil {
		rules, checkPrincipal = tr.start(len(s.e.rules)), true
	}
	for _, i := range rules {
		if checkPrincipal && !s.has(i) {
			tr.set(i, outcomePrincipal)
			continue
		}
		r := &s.e.rules[i]
		if (r.allow|r.deny)&bit == 0 {
			tr.set(i, outcomeOperation)
			continue // silent on op
		}
		if r.deny&bit == 0 && allowedBy >= 0 && tr == nil {
			continue // another allow cannot change the answer
		}
		if r.deny&bit != 0 {
			if !q.denies(r.patterns[q.rt]) {
				tr.set(i, outcomeResource)
				continue
			}
			if tr == nil {
				return Decision{Allowed: false, Rule: r.name}
			}
			tr.deny(i) // the first deny decides, once every rule is recorded
			continue
		}
		if !q.allows(r.patterns[q.rt]) {
			tr.set(i, outcomeResource)
			continue
		}
		tr.set(i, outcomeAllow)
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
