package policy

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
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
