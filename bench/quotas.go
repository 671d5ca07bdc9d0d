package bench

import (
	"fmt"
	"strings"
)

// QuotaRules is how many quota rules the kproxy-quotas target has.
const QuotaRules = 20

// quotasYAML is the kproxy-quotas target's policy: quotas alone (so no
// authorization runs), QuotaRules-1 for principals the bench traffic never
// has, then one for everyone with every rate limit far above what any run
// reaches. The bench's connections are thus bound to a rule and every
// produce and fetch is counted against it, but none is ever throttled:
// the cost of quotas configured and not hit.
func quotasYAML() string {
	var b strings.Builder
	b.WriteString("policy:\n  quotas:\n")
	for i := range QuotaRules - 1 {
		principal := fmt.Sprintf("User:decoy-%02d", i)
		if i%2 == 1 {
			principal = fmt.Sprintf("client_id:decoy-%02d-*", i)
		}
		fmt.Fprintf(&b, "    - {name: decoy-%02d, principals: [%q], produce_bytes_per_second: 1000000, fetch_bytes_per_second: 1000000, max_connections: 10}\n", i, principal)
	}
	b.WriteString("    - {name: bench, principals: [\"*\"], produce_bytes_per_second: 1e15, fetch_bytes_per_second: 1e15, request_percentage: 1e9, connection_creation_rate: 1e9, max_connections: 1000000000}\n")
	return b.String()
}
