package policy

// ruleOutcome is what one rule did for one authorization question.
type ruleOutcome uint8

// What a rule can do for a question, in the order a decision checks.
const (
	// outcomePrincipal: none of the rule's principals is the asker.
	outcomePrincipal ruleOutcome = iota + 1
	// outcomeOperation: the rule neither allows nor denies the operation
	// (allowed operations include the ones they imply).
	outcomeOperation
	// outcomeResource: no pattern of the rule matches the resource (or
	// the rule names no resource of its type).
	outcomeResource
	// outcomeAllow: the rule matches and allows.
	outcomeAllow
	// outcomeDeny: the rule matches and denies.
	outcomeDeny
)

// ruleTrace records what every rule did for one decision (ruleSubject.Explain).
type ruleTrace struct {
	// Outcomes has one entry per rule, in file order.
	Outcomes []ruleOutcome
	// Decider is the index of the rule that decided, -1 for the default.
	Decider int
	order   []int32
}

// start readies t for an engine of n rules and returns every rule index,
// in file order, for the decision to walk.
func (t *ruleTrace) start(n int) []int32 {
	t.Outcomes, t.Decider, t.order = make([]ruleOutcome, n), -1, make([]int32, n)
	for i := range t.order {
		t.order[i] = int32(i)
	}
	return t.order
}

// set records rule i's outcome; a nil t (the data path) records nothing.
func (t *ruleTrace) set(i int32, o ruleOutcome) {
	if t != nil {
		t.Outcomes[i] = o
	}
}

// deny records that rule i matched and denies; the first such rule decides.
func (t *ruleTrace) deny(i int32) {
	t.Outcomes[i] = outcomeDeny
	if t.Decider < 0 {
		t.Decider = int(i)
	}
}

func (t *ruleTrace) decided(i int32) {
	if t != nil {
		t.Decider = int(i)
	}
}

// Explain is Decide with a record of what each rule did: the same
// decision, through the same code.
func (s *ruleSubject) Explain(op Operation, rt ResourceType, name string) (Decision, *ruleTrace) {
	tr := &ruleTrace{}
	d := s.decide(&question{op: op, rt: rt, name: name}, tr)
	if tr.Outcomes == nil { // a question no rule can answer
		tr.start(len(s.e.rules))
	}
	return d, tr
}
