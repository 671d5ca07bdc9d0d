package policy

import (
	"fmt"
	"sync"

	"github.com/kproxy/kproxy/policy/policyconfig"
)

// maxCachedSubjects bounds the per-policy cache of principals' Subjects; a
// principal past it gets a ruleSubject built per request.
const maxCachedSubjects = 4096

// state is one compiled policy: what a request is checked against. It is
// immutable; a reload swaps in a new one, and a request keeps the state it
// started with.
type state struct {
	// policy is the section this was compiled from, for the reload diff.
	policy     *policyconfig.Policy
	engine     *ruleEngine
	gov        governance
	auditOnly  bool // mode: audit
	logAllowed bool // audit.log_allowed

	// subjects caches each principal's ruleSubject: principals are few (a user,
	// a client id, an address, a listener), and narrowing a large policy to
	// one costs more than all of a request's decisions. The cache belongs
	// to this compiled policy, so a reload starts afresh.
	mu       sync.RWMutex
	subjects map[subjectKey]*ruleSubject
}

// subject returns p's ruleSubject of this policy's engine.
func (st *state) subject(p *Principal) *ruleSubject {
	key := st.engine.subjectKey(p)
	st.mu.RLock()
	s, ok := st.subjects[key]
	st.mu.RUnlock()
	if ok {
		return s
	}
	built := st.engine.subjectOf(p)
	st.mu.Lock()
	defer st.mu.Unlock()
	if s, ok := st.subjects[key]; ok {
		return s
	}
	if len(st.subjects) < maxCachedSubjects {
		st.subjects[key] = &built
	}
	return &built
}

// compileState compiles a validated policy section and audit settings.
func compileState(p *policyconfig.Policy, a *policyconfig.Audit) (*state, error) {
	if p == nil {
		return nil, nil
	}
	engine, err := compileRules(*p)
	if err != nil {
		return nil, err
	}
	gov, err := compileGovernance(p)
	if err != nil {
		return nil, err
	}
	st := &state{policy: p, engine: engine, gov: gov, auditOnly: p.Mode == policyconfig.PolicyModeAudit, subjects: map[subjectKey]*ruleSubject{}}
	if a != nil {
		st.logAllowed = a.LogAllowed
	}
	return st, nil
}

func (st *state) String() string {
	mode := policyconfig.PolicyModeEnforce
	if st.auditOnly {
		mode = policyconfig.PolicyModeAudit
	}
	return fmt.Sprintf("%d rules, %d governance, mode %s", st.engine.Rules(), len(st.gov.rules), mode)
}
