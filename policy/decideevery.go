package policy

// DecideEvery answers whether the subject may perform op on every resource
// of type rt, whatever its name: some rule allows op on a "*" pattern (or
// the default allows) and no rule denies op on any pattern of that type.
// It decides what a request whose resources the broker chooses (a regex
// subscription) may be given.
func (s *Subject) DecideEvery(op Operation, rt ResourceType) Decision {
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
			return Decision{Allowed: false, Rule: r.name}
		}
		for j := range r.patterns[rt] {
			if allowedBy < 0 && r.patterns[rt][j].matchesEverything() {
				allowedBy = i
			}
		}
	}
	if allowedBy >= 0 {
		return Decision{Allowed: true, Rule: s.e.rules[allowedBy].name}
	}
	return Decision{Allowed: s.e.defaultAllow, Rule: DefaultRule}
}
