package policyconfig

import (
	"strings"

	"github.com/kproxy/kproxy/filter"
)

// PolicySection declares the policy section as a filter declares its own
// (filter.Factory): its name, reference rows and checks. kproxy's loader
// holds it at policy and virtual_clusters[].policy (a virtual cluster
// without one inherits the top level's); the server builds the enforcer
// from it, with the upstream clients and audit log it needs, and reloads
// it on SIGHUP or a change to the file.
func PolicySection() filter.Factory[Policy] {
	return filter.Factory[Policy]{
		Section: "policy",
		Phase:   filter.PhaseAuthorize,
		Keys:    policyRows(),
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
