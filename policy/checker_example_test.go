package policy_test

import (
	"fmt"
	"strings"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/policy"
)

// ExampleChecker asks a policy what it decides, outside the data path, as
// kproxy policy explain does.
func ExampleChecker() {
	cfg, err := config.Parse(strings.NewReader(`
upstream:
  bootstrap_servers: [kafka-0:9092]
policy:
  default: deny
  rules:
    - name: payments-writers
      principals: ["User:svc-payments"]
      allow: [write, describe]
      topics: ["payments.*"]
`))
	if err != nil {
		panic(err)
	}
	checker, err := policy.NewChecker(cfg.Policy, "policy")
	if err != nil {
		panic(err)
	}
	for _, topic := range []string{"payments.eu", "events.clicks"} {
		d := checker.Decide(policy.Question{
			Principal: policy.Principal{User: "svc-payments"},
			Operation: policy.OpWrite, Resource: policy.ResTopic, Name: topic,
		})
		fmt.Printf("write %s: allowed=%v rule=%s\n", topic, d.Allowed, d.Rule)
	}
	// Output:
	// write payments.eu: allowed=true rule=payments-writers
	// write events.clicks: allowed=false rule=default
}
