package policy

import (
	"cmp"
	"fmt"
	"reflect"

	"github.com/kproxy/kproxy/policy/policyconfig"
)

// The parts of a policy diff that compare the policy's settings and its
// governance and quota rules rather than asking questions.

func rulesOf[T any](p *policyconfig.Policy, get func(*policyconfig.Policy) []T) []T {
	if p == nil {
		return nil
	}
	return get(p)
}

// namedChanges lists rules added, removed or changed, matched by name
// (by position when unnamed).
func namedChanges[T any](before, after []T, name func(T) string) []string {
	key := func(i int, v T) string {
		if n := name(v); n != "" {
			return n
		}
		return fmt.Sprintf("#%d", i)
	}
	old := map[string]T{}
	for i, v := range before {
		old[key(i, v)] = v
	}
	var out []string
	seen := map[string]bool{}
	for i, v := range after {
		k := key(i, v)
		seen[k] = true
		prev, ok := old[k]
		switch {
		case !ok:
			out = append(out, "added "+k)
		case !reflect.DeepEqual(prev, v):
			out = append(out, "changed "+k)
		}
	}
	for i, v := range before {
		if k := key(i, v); !seen[k] {
			out = append(out, "removed "+k)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// settingsChanges lists changes to whether there is a policy, its mode and
// default, and its other quota settings.
func settingsChanges(before, after *policyconfig.Policy) []string {
	out := []string{}
	switch {
	case before == nil && after == nil:
		return out
	case before == nil:
		return append(out, "policy added")
	case after == nil:
		return append(out, "policy removed: every request is forwarded unchecked")
	}
	mode := func(p *policyconfig.Policy) string { return cmp.Or(p.Mode, policyconfig.PolicyModeEnforce) }
	def := func(p *policyconfig.Policy) string { return cmp.Or(p.Default, policyconfig.PolicyDefaultDeny) }
	if a, b := mode(before), mode(after); a != b {
		out = append(out, fmt.Sprintf("mode %s -> %s", a, b))
	}
	if a, b := def(before), def(after); a != b {
		out = append(out, fmt.Sprintf("default %s -> %s", a, b))
	}
	if !reflect.DeepEqual(before.BrokerDefaults, after.BrokerDefaults) {
		out = append(out, "broker_defaults changed")
	}
	if !reflect.DeepEqual(before.QuotaWindows, after.QuotaWindows) || before.QuotaReplicas != after.QuotaReplicas ||
		!reflect.DeepEqual(before.QuotaAuditSampleRate, after.QuotaAuditSampleRate) {
		out = append(out, "quota settings changed (quota_windows, quota_replicas, quota_audit_sample_rate)")
	}
	return out
}
