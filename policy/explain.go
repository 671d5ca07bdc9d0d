package policy

import (
	"fmt"
	"strconv"

	"github.com/kproxy/kproxy/policy/policyconfig"
)

// Question is one authorization question for explain: may Principal
// perform Operation on the resource of type Resource named Name.
type Question struct {
	Principal Principal
	Operation Operation
	Resource  ResourceType
	// Name is the resource's name; the cluster's is ClusterName.
	Name string
}

// Explanation is the answer to a Question with its reasons: what
// `kproxy policy explain --output json` prints and the admin endpoint's
// /policy/explain serves.
type Explanation struct {
	VirtualCluster string `json:"virtual_cluster,omitempty"`
	Principal      string `json:"principal"`
	ClientID       string `json:"client_id,omitempty"`
	Host           string `json:"host,omitempty"`
	Listener       string `json:"listener,omitempty"`
	Operation      string `json:"operation"`
	ResourceType   string `json:"resource_type"`
	Resource       string `json:"resource"`
	// Decision is ALLOW or DENY.
	Decision string `json:"decision"`
	// DecidedBy is the deciding rule's key (policy.rules[3]), "default"
	// when no rule matched, or "no policy".
	DecidedBy string `json:"decided_by"`
	// Rule is the deciding rule as written, empty for the default.
	Rule string `json:"rule,omitempty"`
	// RuleLine is the deciding rule's line in the file, when known.
	RuleLine int `json:"rule_line,omitempty"`
	// Mode is the policy's mode: in audit mode a DENY is logged, not
	// enforced.
	Mode    string `json:"mode,omitempty"`
	Default string `json:"default,omitempty"`
	// Rules says, for every rule in file order, what it did.
	Rules      []RuleExplanation  `json:"rules"`
	Governance []GovernanceNote   `json:"governance"`
	Quotas     []QuotaExplanation `json:"quotas"`
}

// RuleExplanation is what one rule did for the question.
type RuleExplanation struct {
	Key string `json:"key"`
	// Line is the rule's line in the file, when explain was given it.
	Line int    `json:"line,omitempty"`
	Name string `json:"name,omitempty"`
	Text string `json:"text"`
	// Outcome: "decided", "matched" (allows or denies too, but another
	// rule decided), or "no match".
	Outcome string `json:"outcome"`
	// Reason says why: which part of the rule did not match, or how the
	// rule matched.
	Reason string `json:"reason"`
}

// GovernanceNote is a governance rule whose scope covers the principal
// (and the topic, for a topic question).
type GovernanceNote struct {
	Key       string   `json:"key"`
	Name      string   `json:"name,omitempty"`
	Constrain []string `json:"constrains"`
}

// QuotaExplanation is a quota rule whose principals match; InForce are the
// limits this rule sets for the principal (the first matching rule that
// sets a limit is the one in force).
type QuotaExplanation struct {
	Key     string   `json:"key"`
	Name    string   `json:"name,omitempty"`
	Limits  []string `json:"limits"`
	InForce []string `json:"in_force"`
}

// Decisions as explain writes them.
const (
	DecisionAllowText = "ALLOW"
	DecisionDenyText  = "DENY"
	decidedNoPolicy   = "no policy"
)

// Checker answers questions about one cluster's policy outside the data
// path, through the engine the data path uses.
type Checker struct {
	key    string // the policy's key in the file: "policy", or "virtual_clusters[1].policy"
	pol    *policyconfig.Policy
	st     *state // nil: no policy that authorizes
	quotas []quotaMatcher
	lines  []int // each rule's line in the file; nil: unknown
}

// SetRuleLines says where in the file each rule is written (by index), so
// that explanations point at the line.
func (c *Checker) SetRuleLines(lines []int) { c.lines = lines }

// NewChecker compiles a validated policy section found at key (nil: none).
func NewChecker(p *policyconfig.Policy, key string) (*Checker, error) {
	c := &Checker{key: key, pol: p}
	if p == nil {
		return c, nil
	}
	st, err := compileState(p.Authorizes(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	c.st = st
	for i, q := range p.Quotas {
		m, err := compilePrincipals(q.Principals)
		if err != nil {
			return nil, fmt.Errorf("%s.quotas[%d] (%s): %w", key, i, q.Name, err)
		}
		c.quotas = append(c.quotas, m)
	}
	return c, nil
}

// Decide answers q as the data path would.
func (c *Checker) Decide(q Question) Decision {
	if c.st == nil {
		return Decision{Allowed: true, Rule: decidedNoPolicy}
	}
	s := c.st.engine.subjectOf(&q.Principal)
	return s.Decide(q.Operation, q.Resource, q.Name)
}

// Explain answers q and says why.
func (c *Checker) Explain(q Question) Explanation {
	x := Explanation{VirtualCluster: q.Principal.VirtualCluster, Principal: q.Principal.String(), ClientID: q.Principal.ClientID,
		Listener: q.Principal.Listener, Operation: operationText(q.Operation), ResourceType: resourceText(q.Resource), Resource: q.Name,
		Rules: []RuleExplanation{}, Governance: []GovernanceNote{}, Quotas: []QuotaExplanation{}}
	if q.Principal.Addr.IsValid() {
		x.Host = q.Principal.Addr.String()
	}
	c.explainQuotas(&x, &q.Principal)
	if c.st == nil {
		x.Decision, x.DecidedBy = DecisionAllowText, decidedNoPolicy
		return x
	}
	x.Mode, x.Default = c.pol.Mode, c.pol.Default
	if x.Mode == "" {
		x.Mode = policyconfig.PolicyModeEnforce
	}
	if x.Default == "" {
		x.Default = policyconfig.PolicyDefaultDeny
	}
	s := c.st.engine.subjectOf(&q.Principal)
	d, tr := s.Explain(q.Operation, q.Resource, q.Name)
	x.Decision = DecisionDenyText
	if d.Allowed {
		x.Decision = DecisionAllowText
	}
	x.DecidedBy = DefaultRule
	for i, o := range tr.Outcomes {
		r := c.pol.Rules[i]
		re := RuleExplanation{Key: c.ruleKey(i), Name: r.Name, Text: ruleText(r)}
		if i < len(c.lines) {
			re.Line = c.lines[i]
		}
		re.Outcome, re.Reason = c.ruleReason(q, i, o, tr)
		if i == tr.Decider {
			x.DecidedBy, x.Rule, x.RuleLine = re.Key, re.Text, re.Line
		}
		x.Rules = append(x.Rules, re)
	}
	c.explainGovernance(&x, q)
	return x
}

func (c *Checker) ruleKey(i int) string { return fmt.Sprintf("%s.rules[%d]", c.key, i) }

// ruleReason says what rule i did, in words.
func (c *Checker) ruleReason(q Question, i int, o ruleOutcome, tr *ruleTrace) (outcome, reason string) {
	r := c.pol.Rules[i]
	op := q.Operation.ConfigName()
	switch o {
	case outcomePrincipal:
		return "no match", fmt.Sprintf("principal: %s is none of %s", describePrincipal(&q.Principal), list(r.Principals))
	case outcomeOperation:
		switch {
		case len(r.Allow) == 0:
			return "no match", fmt.Sprintf("operation: the rule denies only %s, not %s", list(r.Deny), op)
		case len(r.Deny) == 0:
			return "no match", fmt.Sprintf("operation: the rule allows only %s (and what they imply), not %s", list(r.Allow), op)
		}
		return "no match", fmt.Sprintf("operation: the rule allows %s (and what they imply) and denies %s, not %s", list(r.Allow), list(r.Deny), op)
	case outcomeResource:
		if !r.Names(q.Resource) {
			return "no match", fmt.Sprintf("resource: the rule names no %s", resourceWord(q.Resource))
		}
		return "no match", fmt.Sprintf("resource: %s %s matches none of %s", resourceWord(q.Resource), q.Name, list(r.Patterns(q.Resource)))
	case outcomeAllow, outcomeDeny:
		verb := "allows"
		if o == outcomeDeny {
			verb = "denies"
		}
		switch {
		case i == tr.Decider && o == outcomeDeny:
			return "decided", "matches and denies: a deny wins over every allow"
		case i == tr.Decider:
			return "decided", "matches and allows: the first matching allow, and no rule denies"
		case tr.Decider >= 0 && tr.Outcomes[tr.Decider] == outcomeDeny && o == outcomeAllow:
			return "matched", fmt.Sprintf("matches and allows, but %s denies and a deny wins", c.ruleKey(tr.Decider))
		default:
			return "matched", fmt.Sprintf("matches and %s too; %s came first", verb, c.ruleKey(tr.Decider))
		}
	}
	return "no match", "the question is outside what rules decide"
}

// explainGovernance lists the governance rules whose scope covers the
// principal and, for a topic, the topic.
func (c *Checker) explainGovernance(x *Explanation, q Question) {
	for i := range c.st.gov.rules {
		g := &c.st.gov.rules[i]
		if !anyPrincipal(g.principals, &q.Principal) {
			continue
		}
		cfg := c.pol.Governance[i]
		var constrains []string
		if cfg.ClientIDPattern != "" {
			constrains = append(constrains, fmt.Sprintf("client_id_pattern %s (every request)", cfg.ClientIDPattern))
		}
		if len(cfg.ForbiddenAPIs) > 0 {
			constrains = append(constrains, fmt.Sprintf("forbidden_apis %s", list(cfg.ForbiddenAPIs)))
		}
		topicScoped := q.Resource == ResTopic && g.coversTopic(q.Name)
		if topicScoped && cfg.Produce != nil {
			constrains = append(constrains, "produce "+produceText(cfg.Produce))
		}
		if topicScoped && cfg.TopicChanges != nil {
			constrains = append(constrains, "topic_changes "+topicChangesText(cfg.TopicChanges))
		}
		if len(constrains) > 0 {
			x.Governance = append(x.Governance, GovernanceNote{Key: fmt.Sprintf("%s.governance[%d]", c.key, i), Name: cfg.Name, Constrain: constrains})
		}
	}
}

// explainQuotas lists the quota rules whose principals match p.
func (c *Checker) explainQuotas(x *Explanation, p *Principal) {
	taken := map[string]bool{}
	for i, m := range c.quotas {
		if len(m) == 0 || !anyPrincipal(m, p) {
			continue
		}
		q := c.pol.Quotas[i]
		qe := QuotaExplanation{Key: fmt.Sprintf("%s.quotas[%d]", c.key, i), Name: q.Name, Limits: []string{}, InForce: []string{}}
		for _, l := range quotaLimits(q) {
			qe.Limits = append(qe.Limits, l.text)
			if !taken[l.key] {
				taken[l.key] = true
				qe.InForce = append(qe.InForce, l.text)
			}
		}
		x.Quotas = append(x.Quotas, qe)
	}
}

type quotaLimit struct{ key, text string }

// quotaLimits are the limits q sets, as the file names them.
func quotaLimits(q policyconfig.Quota) []quotaLimit {
	var out []quotaLimit
	add := func(key string, v float64) {
		if v != 0 {
			out = append(out, quotaLimit{key, key + " " + strconv.FormatFloat(v, 'f', -1, 64)})
		}
	}
	add("produce_bytes_per_second", q.ProduceBytesPerSecond)
	add("fetch_bytes_per_second", q.FetchBytesPerSecond)
	add("request_percentage", q.RequestPercentage)
	add("connection_creation_rate", q.ConnectionCreationRate)
	add("max_connections", float64(q.MaxConnections))
	return out
}
