package bench

import (
	"fmt"
	"os"
	"strings"
)

// PolicyRules is how many rules the generated policy has.
const PolicyRules = 50

// policyYAML is the generated policy block (docs/policy.md's schema): 48
// rules for other principals and resources that the bench traffic never
// matches, then two that allow it (read, write, describe on the bench
// topic and any group; idempotent_write and describe on the cluster), with
// everything else denied. The decoys use every principal kind and both
// allow and deny, and since a matching deny wins over any allow the engine
// cannot stop at the first allow: this is a policy of realistic size, not
// a best case.
func policyYAML(topic string) string {
	var b strings.Builder
	b.WriteString("policy:\n  mode: enforce\n  default: deny\n  rules:\n")
	principal := func(i int) string {
		switch i % 4 {
		case 0:
			return fmt.Sprintf("User:decoy-%02d", i)
		case 1:
			return fmt.Sprintf("client_id:decoy-%02d-*", i)
		case 2:
			return fmt.Sprintf("cidr:10.%d.0.0/16", i)
		default:
			return fmt.Sprintf("cn:decoy-%02d.example.com", i)
		}
	}
	for i := range PolicyRules - 2 {
		verb := "allow"
		if i%3 == 2 {
			verb = "deny"
		}
		fmt.Fprintf(&b, "    - name: decoy-%02d\n", i)
		fmt.Fprintf(&b, "      principals: [%q]\n", principal(i))
		fmt.Fprintf(&b, "      %s: [read, write, describe]\n", verb)
		fmt.Fprintf(&b, "      topics: [\"decoy-%02d-*\"]\n", i)
		fmt.Fprintf(&b, "      groups: [\"decoy-%02d\"]\n", i)
		fmt.Fprintf(&b, "      transactional_ids: [\"decoy-%02d-*\"]\n", i)
	}
	b.WriteString("    - name: bench-topic\n")
	b.WriteString("      principals: [\"*\"]\n")
	b.WriteString("      allow: [read, write, describe]\n")
	fmt.Fprintf(&b, "      topics: [%q]\n", topic)
	b.WriteString("      groups: [\"*\"]\n")
	b.WriteString("    - name: bench-cluster\n")
	b.WriteString("      principals: [\"*\"]\n")
	b.WriteString("      allow: [idempotent_write, describe]\n")
	b.WriteString("      cluster: true\n")
	return b.String()
}

// policyBlock is the policy to append to kproxy's configuration.
func policyBlock(o *Options) (string, error) {
	if o.PolicyFile == "" {
		return policyYAML(o.Topic), nil
	}
	data, err := os.ReadFile(o.PolicyFile)
	if err != nil {
		return "", fmt.Errorf("policy file: %w", err)
	}
	s := string(data)
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s, nil
}
