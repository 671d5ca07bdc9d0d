package policy

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes x for a person: the decision and the rule that made
// it, then every rule's outcome, the governance and the quotas that apply.
func (x *Explanation) WriteText(w io.Writer) error {
	var b strings.Builder
	who := x.Principal
	if x.VirtualCluster != "" {
		who += " (virtual cluster " + x.VirtualCluster + ")"
	}
	fmt.Fprintf(&b, "%s  %s  %s  %s %s\n", x.Decision, who, x.Operation, x.ResourceType, x.Resource)
	switch x.DecidedBy {
	case decidedNoPolicy:
		b.WriteString("no policy: every request is forwarded unchecked\n")
	case DefaultRule:
		fmt.Fprintf(&b, "decided by the default (%s): no rule matched\n", x.Default)
	default:
		fmt.Fprintf(&b, "decided by %s%s: %s\n", x.DecidedBy, lineSuffix(x.RuleLine), x.Rule)
	}
	if x.Mode != "" && x.Mode != "enforce" && x.Decision == DecisionDenyText {
		fmt.Fprintf(&b, "mode %s: the denial is logged, and the request forwarded\n", x.Mode)
	}
	if len(x.Rules) > 0 {
		b.WriteString("rules:\n")
	}
	for _, r := range x.Rules {
		fmt.Fprintf(&b, "  %s%s %s\n    %s: %s\n", r.Key, lineSuffix(r.Line), r.Text, r.Outcome, r.Reason)
	}
	if len(x.Governance) > 0 {
		b.WriteString("governance:\n")
	}
	for _, g := range x.Governance {
		fmt.Fprintf(&b, "  %s%s: %s\n", g.Key, nameSuffix(g.Name), strings.Join(g.Constrain, "; "))
	}
	if len(x.Quotas) > 0 {
		b.WriteString("quotas:\n")
	}
	for _, q := range x.Quotas {
		fmt.Fprintf(&b, "  %s%s: in force %s", q.Key, nameSuffix(q.Name), list(q.InForce))
		if len(q.InForce) < len(q.Limits) {
			fmt.Fprintf(&b, " (also sets %s, taken by an earlier rule)", list(without(q.Limits, q.InForce)))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// lineSuffix is " (line N)" for a known line.
func lineSuffix(line int) string {
	if line == 0 {
		return ""
	}
	return fmt.Sprintf(" (line %d)", line)
}

func nameSuffix(name string) string {
	if name == "" {
		return ""
	}
	return " (" + name + ")"
}

func without(all, drop []string) []string {
	var out []string
	for _, s := range all {
		found := false
		for _, d := range drop {
			found = found || d == s
		}
		if !found {
			out = append(out, s)
		}
	}
	return out
}
