package policy

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/acl"
)

// OperationTableMarkdown renders the operation table as the Markdown table
// docs/policy.md embeds (a test keeps the two identical).
func OperationTableMarkdown() string {
	var b strings.Builder
	b.WriteString("| Key | API | Needs (operation on resource, when) | A denial is answered with |\n")
	b.WriteString("| ---: | --- | --- | --- |\n")
	for _, e := range operationTable() {
		var needs []string
		for _, n := range e.needs {
			s := fmt.Sprintf("%s on %s", n.op, n.res)
			if n.when != "" {
				s += " (" + n.when + ")"
			}
			needs = append(needs, s)
		}
		switch {
		case e.setup:
			needs = []string{"nothing"}
		case len(needs) == 0:
			needs = []string{"nothing (as Kafka)"}
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", e.key, kmsg.NameForKey(int16(e.key)),
			strings.Join(needs, "; "), e.answer)
	}
	return b.String()
}

// RuleOperationsMarkdown renders the operations a rule may allow or deny
// as the Markdown table docs/policy.md embeds (a test keeps the two
// identical): each one's name in a rule and in Kafka, the resource keys
// it applies to, and what allowing it implies.
func RuleOperationsMarkdown() string {
	var b strings.Builder
	b.WriteString("| In a rule | Kafka's name | Applies to | Allowing it also allows |\n")
	b.WriteString("| --- | --- | --- | --- |\n")
	for _, op := range acl.Operations() {
		var keys, implied []string
		for _, rt := range op.AppliesTo() {
			keys = append(keys, "`"+rt.ConfigKey()+"`")
		}
		for _, other := range acl.Operations() {
			if other != op && maskOf(op).withImplied()&maskOf(other) != 0 {
				implied = append(implied, "`"+other.ConfigName()+"`")
			}
		}
		switch {
		case op == opAll:
			implied = []string{"every operation"}
		case len(implied) == 0:
			implied = []string{"-"}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", op.ConfigName(), op, strings.Join(keys, ", "), strings.Join(implied, ", "))
	}
	return b.String()
}
