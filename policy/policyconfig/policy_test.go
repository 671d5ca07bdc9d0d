package policyconfig_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/acl"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

func TestPolicyParses(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader(`
upstream: {bootstrap_servers: ["a:1"]}
policy:
  mode: audit
  default: allow
  rules:
    - name: payments-writers
      principals: ["User:svc-payments", "cidr:10.1.0.0/16", "client_id:pay-*", "cn:x", "listener:node-1", "*"]
      allow: [write, Describe, DescribeConfigs, idempotent-write]
      topics: ["payments.*", "re:^pay\\."]
      transactional_ids: ["payments-*"]
      cluster: true
  governance:
    - name: g
      produce: {required_acks: all, allowed_compression: [lz4, ZSTD], max_batch_bytes: 1000, require_idempotence: true}
      topic_changes: {name_pattern: "re:^[a-z]+$", max_partitions: 64, min_replication_factor: 2, max_replication_factor: 3,
                      required_configs: ["min.insync.replicas >= 2"], forbidden_configs: ["unclean.*"]}
      client_id_pattern: "app-*"
      forbidden_apis: [DeleteRecords]
audit: {output: /tmp/audit.log, log_allowed: true, buffer_size: 10}
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Policy.Mode != "audit" || len(cfg.Policy.Rules) != 1 || cfg.Audit.BufferSize != 10 {
		t.Errorf("parsed %+v", cfg.Policy)
	}
}

func TestPolicyRejects(t *testing.T) {
	const base = "upstream: {bootstrap_servers: [\"a:1\"]}\n"
	rule := func(body string) string { return base + "policy:\n  rules:\n    - " + body }
	governance := func(fields string) string { return base + "policy:\n  governance: [{name: g, " + fields + "}]" }
	tests := []struct {
		name, yaml, want string
	}{
		{"bad mode", base + "policy: {mode: loud}", `policy.mode: "loud"`},
		{"bad default", base + "policy: {default: maybe}", `policy.default: "maybe"`},
		{"unknown key", base + "policy: {rulez: []}", `unknown key "rulez"`},
		{"typo in operation", rule(`{name: r, principals: ["*"], allow: [write, wrte], topics: ["*"]}`),
			`policy.rules[0].allow[1]: "wrte" is not an operation; valid: read, write, create, delete, alter, describe, describe_configs, alter_configs, idempotent_write, cluster_action, all`},
		{"no name", rule(`{principals: ["*"], allow: [read], topics: ["*"]}`), "policy.rules[0].name: required"},
		{"duplicate name", base + "policy:\n  rules:\n    - {name: a, principals: [\"*\"], allow: [read], topics: [\"*\"]}\n    - {name: a, principals: [\"*\"], allow: [read], topics: [\"*\"]}", `policy.rules[1].name: "a" is also the name of policy.rules[0]`},
		{"no principals", rule(`{name: r, allow: [read], topics: ["*"]}`), "policy.rules[0].principals: required"},
		{"bad principal kind", rule(`{name: r, principals: ["Group:x"], allow: [read], topics: ["*"]}`), `policy.rules[0].principals[0]: "Group:x": unknown principal kind "Group"`},
		{"bad cidr", rule(`{name: r, principals: ["cidr:10.0.0/8"], allow: [read], topics: ["*"]}`), `policy.rules[0].principals[0]`},
		{"no resources", rule(`{name: r, principals: ["*"], allow: [read]}`), "names no resource"},
		{"no operations", rule(`{name: r, principals: ["*"], topics: ["*"]}`), "neither allow nor deny"},
		{"op for wrong resource", rule(`{name: r, principals: ["*"], allow: [idempotent_write], topics: ["*"]}`), `policy.rules[0].allow[0]: "idempotent_write" does not apply to topics`},
		{"allowed and denied", rule(`{name: r, principals: ["*"], allow: [read], deny: [read], topics: ["*"]}`), "both allowed and denied"},
		{"bad regex", rule(`{name: r, principals: ["*"], allow: [read], topics: ["re:("]}`), "policy.rules[0].topics[0]"},
		{"reserved name", rule(`{name: default, principals: ["*"], allow: [read], topics: ["*"]}`), "reserved"},
		{"empty governance", base + "policy:\n  governance: [{name: g}]", "constrains nothing"},
		{"bad acks", governance("produce: {required_acks: 2}"), "policy.governance[0].produce.required_acks"},
		{"bad codec", governance("produce: {allowed_compression: [brotli]}"), "policy.governance[0].produce.allowed_compression[0]"},
		{"bad requirement", governance("topic_changes: {required_configs: [\"min.insync.replicas\"]}"), "policy.governance[0].topic_changes.required_configs[0]"},
		{"non-numeric comparison", governance("topic_changes: {required_configs: [\"a >= b\"]}"), "needs a decimal number"},
		{"hex requirement", governance("topic_changes: {required_configs: [\"retention.ms <= 0x10\"]}"), "needs a decimal number"},
		{"negative broker default", base + "policy: {broker_defaults: {num_partitions: -1}}", "policy.broker_defaults.num_partitions"},
		{"min above max rf", governance("topic_changes: {min_replication_factor: 3, max_replication_factor: 2}"), "min_replication_factor"},
		{"unknown api", governance("forbidden_apis: [DeleteEverything]"), "policy.governance[0].forbidden_apis[0]"},
		{"forbid apiversions", governance("forbidden_apis: [ApiVersions]"), "clients need it"},
		{"bad client id pattern", governance("client_id_pattern: \"re:[\""), "policy.governance[0].client_id_pattern"},
		{"bad audit buffer", base + "audit: {buffer_size: -1}", "audit.buffer_size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse(strings.NewReader(tt.yaml))
			if err == nil {
				t.Fatal("accepted an invalid policy")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

// TestRuleResourceKeys: a rule's resources are read under the keys package
// acl names them by, and Rule.Patterns and Names report them per type.
func TestRuleResourceKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString("upstream: {bootstrap_servers: [\"a:1\"]}\npolicy:\n  rules:\n    - {name: r, principals: [\"*\"], allow: [describe]")
	for _, rt := range acl.ResourceTypes() {
		if rt == acl.Cluster {
			fmt.Fprintf(&b, ", %s: true", rt.ConfigKey())
			continue
		}
		fmt.Fprintf(&b, ", %s: [%q]", rt.ConfigKey(), rt.ConfigKey()+"-*")
	}
	b.WriteString("}\n")
	cfg, err := config.Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	r := cfg.Policy.Rules[0]
	for _, rt := range acl.ResourceTypes() {
		if !r.Names(rt) {
			t.Errorf("the rule does not name %v", rt)
		}
		if p := r.Patterns(rt); rt != acl.Cluster && (len(p) != 1 || p[0] != rt.ConfigKey()+"-*") {
			t.Errorf("%v patterns %q", rt, p)
		}
	}
	if r := (policyconfig.Rule{Topics: []string{"t"}}); r.Names(acl.Group) || r.Names(acl.Cluster) || !r.Names(acl.Topic) {
		t.Errorf("a topics-only rule names %+v", r)
	}
}
