package policy

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kproxy/kproxy/internal/acl"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// AccessChange is one question whose answer differs between two
// policies: access gained (allowed now, denied before) or lost.
type AccessChange struct {
	Gained       bool   `json:"gained"`
	Principal    string `json:"principal"`
	Operation    string `json:"operation"`
	ResourceType string `json:"resource_type"`
	Resource     string `json:"resource"`
	// Before and After name the rule that decided each answer (its name,
	// "default", or "no policy").
	Before string `json:"before"`
	After  string `json:"after"`
}

// String is the change as one line: "+ User:bob  WRITE  topic orders.eu".
func (c AccessChange) String() string {
	sign := "-"
	if c.Gained {
		sign = "+"
	}
	return fmt.Sprintf("%s %s  %s  %s %s", sign, c.Principal, c.Operation, c.ResourceType, c.Resource)
}

// PolicyDiff is what changed between two policies of one cluster.
type PolicyDiff struct {
	// VirtualCluster is the cluster's name, "" without virtual clusters.
	VirtualCluster string         `json:"virtual_cluster,omitempty"`
	Access         []AccessChange `json:"access"`
	// Settings, Governance and Quotas describe changes to the mode and
	// default, and to governance and quota rules, by name.
	Settings   []string `json:"settings"`
	Governance []string `json:"governance"`
	Quotas     []string `json:"quotas"`
	// Questions is how many questions were compared.
	Questions int `json:"questions"`
}

// Counts is how many accesses were gained and lost.
func (d *PolicyDiff) Counts() (gained, lost int) {
	for _, c := range d.Access {
		if c.Gained {
			gained++
		} else {
			lost++
		}
	}
	return gained, lost
}

// Empty reports whether nothing changed.
func (d *PolicyDiff) Empty() bool {
	return len(d.Access) == 0 && len(d.Settings) == 0 && len(d.Governance) == 0 && len(d.Quotas) == 0
}

// Lines is the diff as lines: access changes, then settings, governance
// and quota changes.
func (d *PolicyDiff) Lines() []string {
	var out []string
	for _, c := range d.Access {
		out = append(out, c.String())
	}
	for _, group := range []struct {
		prefix string
		lines  []string
	}{{"", d.Settings}, {"governance: ", d.Governance}, {"quotas: ", d.Quotas}} {
		for _, l := range group.lines {
			out = append(out, "~ "+group.prefix+l)
		}
	}
	return out
}

// maxDiffQuestions bounds the questions one diff asks, so a reload of a
// huge policy cannot spend long comparing.
const maxDiffQuestions = 4 << 20

// Diff compares two validated policy sections of the cluster vc ("" without
// virtual clusters; nil: no policy, every request forwarded): for each
// principal and resource any rule of either names (each pattern standing
// for the names it matches, plus "*" for every other principal), and each
// operation that applies to the resource, whether the answer changed. The
// answers come from the engine the data path uses.
func Diff(before, after *policyconfig.Policy, vc string) (PolicyDiff, error) {
	d := PolicyDiff{VirtualCluster: vc, Access: []AccessChange{}, Settings: []string{}, Governance: []string{}, Quotas: []string{}}
	old, err := NewChecker(before, "before")
	if err != nil {
		return d, err
	}
	cur, err := NewChecker(after, "after")
	if err != nil {
		return d, err
	}
	principals := diffPrincipals(vc, before, after)
	resources := diffResources(before, after)
	questions := 0
	for _, rs := range resources {
		questions += len(rs.names) * len(rs.ops)
	}
	if questions*len(principals) > maxDiffQuestions {
		return d, fmt.Errorf("%d principals and %d resource questions are too many to compare (at most %d)", len(principals), questions, maxDiffQuestions)
	}
	for _, p := range principals {
		so, sn := old.subject(&p.p), cur.subject(&p.p)
		for _, rs := range resources {
			for _, name := range rs.names {
				for _, op := range rs.ops {
					d.Questions++
					a, b := so(op, rs.rt, name), sn(op, rs.rt, name)
					if a.Allowed == b.Allowed {
						continue
					}
					d.Access = append(d.Access, AccessChange{Gained: b.Allowed, Principal: p.label, Operation: operationText(op),
						ResourceType: resourceText(rs.rt), Resource: name, Before: a.Rule, After: b.Rule})
				}
			}
		}
	}
	d.Settings = settingsChanges(before, after)
	d.Governance = namedChanges(rulesOf(before, func(p *policyconfig.Policy) []policyconfig.Governance { return p.Governance }),
		rulesOf(after, func(p *policyconfig.Policy) []policyconfig.Governance { return p.Governance }), func(g policyconfig.Governance) string { return g.Name })
	d.Quotas = namedChanges(rulesOf(before, func(p *policyconfig.Policy) []policyconfig.Quota { return p.Quotas }),
		rulesOf(after, func(p *policyconfig.Policy) []policyconfig.Quota { return p.Quotas }), func(q policyconfig.Quota) string { return q.Name })
	return d, nil
}

// subject returns the decision function of p's ruleSubject in this policy.
func (c *Checker) subject(p *Principal) func(Operation, ResourceType, string) Decision {
	if c.st == nil {
		return func(Operation, ResourceType, string) Decision { return Decision{Allowed: true, Rule: decidedNoPolicy} }
	}
	s := c.st.engine.subjectOf(p)
	return s.Decide
}

type diffPrincipal struct {
	label string
	p     Principal
}

// diffPrincipals stands one principal for each principal matcher the
// rules of either policy name, and "*" for everyone else.
func diffPrincipals(vc string, policies ...*policyconfig.Policy) []diffPrincipal {
	seen := map[string]bool{}
	var out []diffPrincipal
	for _, pol := range policies {
		if pol == nil {
			continue
		}
		for _, r := range pol.Rules {
			for _, s := range r.Principals {
				if seen[s] || s == "*" {
					continue
				}
				if p, ok := representative(s); ok {
					seen[s] = true
					p.VirtualCluster = cmp.Or(p.VirtualCluster, vc)
					out = append(out, diffPrincipal{label: s, p: p})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b diffPrincipal) int { return strings.Compare(a.label, b.label) })
	return append(out, diffPrincipal{label: "*", p: Principal{User: "*", VirtualCluster: vc}})
}

// representative is a principal the matcher s matches: its pattern taken
// as a name (a glob matches itself); false for a regular expression.
func representative(s string) (Principal, bool) {
	pm, err := policyconfig.ParsePrincipal(s)
	if err != nil || pm.Pattern.Regexp != nil {
		return Principal{}, false
	}
	p := Principal{User: Anonymous}
	name := pm.Pattern.Glob
	switch pm.Kind {
	case policyconfig.PrincipalUser:
		p.User = name
	case policyconfig.PrincipalClientID:
		p.ClientID = name
	case policyconfig.PrincipalCIDR:
		p.Addr = pm.Prefix.Masked().Addr()
	case policyconfig.PrincipalCN:
		p.CN = name
	case policyconfig.PrincipalListener:
		p.Listener = name
	case policyconfig.PrincipalClaim:
		p.Claims = map[string][]string{pm.Claim: {name}}
	case policyconfig.PrincipalVirtualCluster:
		p.VirtualCluster = name
	default:
		return Principal{}, false
	}
	return p, true
}

type diffResourceSet struct {
	rt    ResourceType
	names []string
	ops   []Operation
}

// diffResources is, per resource type, the names the rules of either
// policy match (each glob standing for itself, regular expressions left
// out) and the operations that apply to that type.
func diffResources(policies ...*policyconfig.Policy) []diffResourceSet {
	var out []diffResourceSet
	for _, rt := range acl.ResourceTypes() {
		set := diffResourceSet{rt: rt}
		for _, op := range acl.Operations() {
			if op != acl.All && slices.Contains(op.AppliesTo(), rt) {
				set.ops = append(set.ops, op)
			}
		}
		if rt == ResCluster {
			set.names = []string{ClusterName}
			out = append(out, set)
			continue
		}
		seen := map[string]bool{}
		for _, pol := range policies {
			if pol == nil {
				continue
			}
			for _, r := range pol.Rules {
				for _, s := range r.Patterns(rt) {
					if !seen[s] && !strings.HasPrefix(s, "re:") {
						seen[s] = true
						set.names = append(set.names, s)
					}
				}
			}
		}
		slices.Sort(set.names)
		out = append(out, set)
	}
	return out
}
