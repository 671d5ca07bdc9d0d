package main

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/acl"
	"github.com/kproxy/kproxy/policy"
)

// section is one generated part of docs/policy.md: the text between its
// markers is render's output.
type section struct {
	name   string
	render func() string
}

// sections are docs/policy.md's generated tables, in no particular order.
func sections() []section {
	return []section{
		{"RULE OPERATIONS", ruleOperations},
		{"REVEAL TABLE", revealTable},
		{"OPERATION TABLE", operationTable},
	}
}

// begin and end are a section's markers in docs/policy.md.
func (s section) begin() string {
	return "<!-- BEGIN " + s.name + " (generated: go generate ./policy) -->\n"
}

func (s section) end() string { return "<!-- END " + s.name + " -->" }

// operationTable renders what every API key needs and how a denial is
// answered.
func operationTable() string {
	var b strings.Builder
	b.WriteString("| Key | API | Needs (operation on resource, when) | A denial is answered with |\n")
	b.WriteString("| ---: | --- | --- | --- |\n")
	for _, r := range policy.APIRules() {
		var needs []string
		for _, n := range r.Needs {
			s := fmt.Sprintf("%s on %s", n.Operation, n.Resource)
			if n.When != "" {
				s += " (" + n.When + ")"
			}
			needs = append(needs, s)
		}
		switch {
		case r.Class == policy.ClassSetup:
			needs = []string{"nothing"}
		case len(needs) == 0:
			needs = []string{"nothing (as Kafka)"}
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", r.Key, kmsg.NameForKey(r.Key), strings.Join(needs, "; "), r.Answer)
	}
	return b.String()
}

// ruleOperations renders the operations a rule may allow or deny: each
// one's name in a rule and in Kafka, the resource keys it applies to, and
// what allowing it implies.
func ruleOperations() string {
	var b strings.Builder
	b.WriteString("| In a rule | Kafka's name | Applies to | Allowing it also allows |\n")
	b.WriteString("| --- | --- | --- | --- |\n")
	for _, op := range acl.Operations() {
		var keys, implied []string
		for _, rt := range op.AppliesTo() {
			keys = append(keys, "`"+rt.ConfigKey()+"`")
		}
		for _, other := range policy.ImpliedOperations(op) {
			implied = append(implied, "`"+other.ConfigName()+"`")
		}
		switch {
		case op == acl.All:
			implied = []string{"every operation"}
		case len(implied) == 0:
			implied = []string{"-"}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", op.ConfigName(), op, strings.Join(keys, ", "), strings.Join(implied, ", "))
	}
	return b.String()
}

// revealTable renders the response fields that can reveal a resource, by
// API, with how the policy handles them.
func revealTable() string {
	var b strings.Builder
	b.WriteString("| Key | API | Fields (kind) | Handling |\n| ---: | --- | --- | --- |\n")
	for _, api := range policy.RevealingAPIs() {
		var fs []string
		for _, f := range api.Fields {
			fs = append(fs, fmt.Sprintf("`%s` (%s)", f.Path, f.Kind))
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", api.Key, kmsg.NameForKey(api.Key), strings.Join(fs, ", "), api.Handling)
	}
	return b.String()
}
