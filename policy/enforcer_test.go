package policy

import (
	"io"
	"testing"
)

// newTestEnforcer builds an enforcer from a policy section, with audit
// lines going to audit (discarded when nil).
func newTestEnforcer(t testing.TB, yaml string, audit io.Writer) *Enforcer {
	t.Helper()
	cfg := parsePolicy(t, yaml)
	if audit == nil {
		audit = io.Discard
	}
	enf, err := New(cfg.Policy, cfg.Audit, WithAuditWriter(audit))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { enf.Close() })
	return enf
}
