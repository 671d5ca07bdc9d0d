package policy

import (
	"testing"

	"github.com/kproxy/kproxy/internal/config"
)

// TestExamplePolicyConfig keeps configs/policy-example.yaml valid and
// compilable.
func TestExamplePolicyConfig(t *testing.T) {
	cfg, err := config.Load("../configs/policy-example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Policy == nil || cfg.Audit == nil {
		t.Fatal("example has no policy or audit section")
	}
	st, err := compileState(cfg.Policy, cfg.Audit)
	if err != nil {
		t.Fatal(err)
	}
	p := Principal{User: "svc-payments"}
	if d := st.subject(&p).Decide(OpWrite, ResTopic, "payments.eu"); !d.Allowed || d.Rule != "payments-writers" {
		t.Errorf("example: svc-payments writing payments.eu = %+v", d)
	}
}
