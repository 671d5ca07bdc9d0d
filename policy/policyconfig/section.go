package policyconfig

import (
	"strings"

	"github.com/kproxy/kproxy/filter"
)

// PolicySection declares the policy section as a filter declares its own
// (filter.Factory): its name, reference rows and checks. kproxy's loader
// decodes it at policy and virtual_clusters[].policy (a virtual cluster
// without one inherits the top level's) as it does a program's sections;
// the server completes it with New and Reload, which build and reload the
// enforcer and the quotas. It is built without a section too: the quotas
// and the audit log are in every cluster's chain, and a reload may add or
// remove the policy.
func PolicySection() filter.Factory[Policy] {
	return filter.Factory[Policy]{
		Section:        "policy",
		Phase:          filter.PhaseAuthorize,
		WithoutSection: true,
		Keys:           policyRows(),
		Validate: func(p *Policy, problems *filter.Problems) {
			p.Validate(relativeTo("policy", problems))
		},
	}
}

// AuditSection declares the audit section: where the policy's decisions
// (and the quotas' throttling) are logged.
func AuditSection() filter.Factory[Audit] {
	return filter.Factory[Audit]{
		Section: "audit",
		Keys:    auditKeys(),
		Validate: func(a *Audit, problems *filter.Problems) {
			a.Validate(relativeTo("audit", problems))
		},
	}
}

// relativeTo reports the problems Validate names by their keys as written
// at the top level (policy.rules[0]) under keys relative to section.
func relativeTo(section string, problems *filter.Problems) Bad {
	return func(key, format string, args ...any) {
		problems.Add(strings.TrimPrefix(strings.TrimPrefix(key, section), "."), format, args...)
	}
}
