package policyconfig_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

func TestQuotaValidation(t *testing.T) {
	base := "upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\npolicy:\n"
	tests := []struct{ name, yaml, want string }{
		{"no name", "  quotas: [{principals: [\"*\"], max_connections: 1}]", "policy.quotas[0].name: required"},
		{"duplicate name", "  quotas: [{name: q, principals: [\"*\"], max_connections: 1}, {name: q, principals: [\"*\"], max_connections: 2}]", "policy.quotas[1].name"},
		{"no principals", "  quotas: [{name: q, max_connections: 1}]", "policy.quotas[0].principals: required"},
		{"bad principal", "  quotas: [{name: q, principals: [\"Group:x\"], max_connections: 1}]", "policy.quotas[0].principals[0]"},
		{"no limit", "  quotas: [{name: q, principals: [\"*\"]}]", "sets no limit"},
		{"negative rate", "  quotas: [{name: q, principals: [\"*\"], produce_bytes_per_second: -5}]", "policy.quotas[0].produce_bytes_per_second"},
		{"one window", "  quota_windows: {samples: 1}\n  quotas: [{name: q, principals: [\"*\"], max_connections: 1}]", "policy.quota_windows.samples"},
		{"tiny window", "  quota_windows: {size: 1ms}\n  quotas: [{name: q, principals: [\"*\"], max_connections: 1}]", "policy.quota_windows.size"},
		{"negative replicas", "  quota_replicas: -1\n  quotas: [{name: q, principals: [\"*\"], max_connections: 1}]", "policy.quota_replicas"},
		{"sample rate above 1", "  quota_audit_sample_rate: 2\n  quotas: [{name: q, principals: [\"*\"], max_connections: 1}]", "policy.quota_audit_sample_rate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse(strings.NewReader(base + tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
}

func TestQuotaDefaultsAndQuotasOnly(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader("upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\npolicy:\n  quotas: [{name: q, principals: [\"User:a\"], produce_bytes_per_second: 5e6}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Policy
	if w := p.QuotaWindowsOrDefault(); w.Samples != 11 || w.Size != time.Second {
		t.Errorf("windows %+v, want Kafka's 11 x 1s", w)
	}
	if p.QuotaReplicasOrDefault() != 1 || p.QuotaAuditSampleRateOrDefault() != policyconfig.DefaultQuotaAuditSampleRate {
		t.Error("replicas or audit sample rate defaults wrong")
	}
	if p.Quotas[0].ProduceBytesPerSecond != 5e6 {
		t.Errorf("produce_bytes_per_second %v", p.Quotas[0].ProduceBytesPerSecond)
	}
	if !p.QuotasOnly() || p.Authorizes() != nil {
		t.Error("a policy of quotas alone must authorize nothing")
	}
	p.Default = policyconfig.PolicyDefaultAllow
	if p.QuotasOnly() || p.Authorizes() != p {
		t.Error("a policy with a default authorizes")
	}
}
