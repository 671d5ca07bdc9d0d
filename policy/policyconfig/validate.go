package policyconfig

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/acl"
)

// Bad reports an invalid key: the key as written in the file, and what
// is wrong with its value.
type Bad func(key, format string, args ...any)

// Validate checks the audit section (a may be nil).
func (a *Audit) Validate(bad Bad) {
	if a == nil {
		return
	}
	if a.BufferSize < 0 {
		bad("audit.buffer_size", "%d: must be at least 1 (default %d)", a.BufferSize, DefaultAuditBufferSize)
	}
	if a.Output != "" && a.Output != AuditStdout && strings.TrimSpace(a.Output) != a.Output {
		bad("audit.output", "%q: stray spaces; write stdout or a file path", a.Output)
	}
}

// Validate checks the policy section (p may be nil), naming each invalid
// key under policy.
func (p *Policy) Validate(bad Bad) {
	if p == nil {
		return
	}
	switch p.Mode {
	case "", PolicyModeEnforce, PolicyModeAudit:
	default:
		bad("policy.mode", "%q: must be enforce or audit", p.Mode)
	}
	switch p.Default {
	case "", PolicyDefaultDeny, PolicyDefaultAllow:
	default:
		bad("policy.default", "%q: must be deny or allow", p.Default)
	}
	names := map[string]string{} // rule name → its key
	for i, r := range p.Rules {
		validateRule(bad, fmt.Sprintf("policy.rules[%d]", i), r, names)
	}
	p.BrokerDefaults.validate(bad)
	p.validateQuotas(bad)
	govNames := map[string]string{}
	for i, g := range p.Governance {
		validateGovernance(bad, fmt.Sprintf("policy.governance[%d]", i), g, govNames, names)
	}
}

// validateRule checks rule r at key; names are the rule names seen so far.
func validateRule(bad Bad, key string, r Rule, names map[string]string) {
	validateRuleName(bad, key, r.Name, names)
	validatePrincipals(bad, key, r.Principals, true)
	if len(r.Allow) == 0 && len(r.Deny) == 0 {
		bad(key, "rule %q has neither allow nor deny", r.Name)
	}
	kinds := ruleKinds(r)
	if len(kinds) == 0 {
		bad(key, "rule %q names no resource: set topics, groups, transactional_ids or cluster: true", r.Name)
	}
	validateOperations(bad, key, r, kinds)
	for _, rt := range acl.ResourceTypes() {
		validatePatterns(bad, key+"."+rt.ConfigKey(), r.Patterns(rt))
	}
}

// validateOperations checks r's allow and deny lists: known operations,
// none both allowed and denied, each applying to a resource r names
// (kinds, their keys).
func validateOperations(bad Bad, key string, r Rule, kinds []string) {
	seen := map[acl.Operation]string{}
	for _, list := range []struct {
		name string
		ops  []string
	}{{"allow", r.Allow}, {"deny", r.Deny}} {
		for j, s := range list.ops {
			opKey := fmt.Sprintf("%s.%s[%d]", key, list.name, j)
			op, ok := acl.ParseOperation(s)
			if !ok {
				bad(opKey, "%q is not an operation; valid: %s", s, strings.Join(acl.OperationNames(), ", "))
				continue
			}
			if other, dup := seen[op]; dup && other != list.name {
				bad(opKey, "%q is both allowed and denied in the same rule", s)
			}
			seen[op] = list.name
			if len(kinds) > 0 && !appliesToAny(op, r) {
				bad(opKey, "%q does not apply to %s; it applies to %s", s, strings.Join(kinds, " or "), strings.Join(resourceKeys(op.AppliesTo()), ", "))
			}
		}
	}
}

// validate checks policy.broker_defaults (d may be nil).
func (d *BrokerDefaults) validate(bad Bad) {
	if d == nil {
		return
	}
	if d.NumPartitions < 0 {
		bad("policy.broker_defaults.num_partitions", "%d: must be the upstream's num.partitions (at least 1), or 0 or left out when unknown", d.NumPartitions)
	}
	if d.DefaultReplicationFactor < 0 {
		bad("policy.broker_defaults.default_replication_factor", "%d: must be the upstream's default.replication.factor (at least 1), or 0 or left out when unknown", d.DefaultReplicationFactor)
	}
}

// validateGovernance checks governance entry g at key; govNames are the
// entry names seen so far, ruleNames the rules'.
func validateGovernance(bad Bad, key string, g Governance, govNames, ruleNames map[string]string) {
	validateRuleName(bad, key, g.Name, govNames)
	if other, dup := ruleNames[g.Name]; dup && g.Name != "" {
		bad(key+".name", "%q is also the name of %s: names must be unique across rules and governance", g.Name, other)
	}
	validatePrincipals(bad, key, g.Principals, false)
	validatePatterns(bad, key+".topics", g.Topics)
	if g.Produce == nil && g.TopicChanges == nil && g.ClientIDPattern == "" && len(g.ForbiddenAPIs) == 0 {
		bad(key, "governance %q constrains nothing: set produce, topic_changes, client_id_pattern or forbidden_apis", g.Name)
	}
	if pr := g.Produce; pr != nil {
		validateProduceGovernance(bad, key+".produce", pr)
	}
	if tc := g.TopicChanges; tc != nil {
		validateTopicGovernance(bad, key+".topic_changes", tc)
	}
	if g.ClientIDPattern != "" {
		if _, err := ParsePattern(g.ClientIDPattern); err != nil {
			bad(key+".client_id_pattern", "%v", err)
		}
	}
	for j, api := range g.ForbiddenAPIs {
		k, ok := APIKeyByName(api)
		switch {
		case !ok:
			bad(fmt.Sprintf("%s.forbidden_apis[%d]", key, j), "%q is not a Kafka API name (e.g. DeleteRecords, ElectLeaders)", api)
		case k == int16(kmsg.ApiVersions) || k == int16(kmsg.SASLHandshake) || k == int16(kmsg.SASLAuthenticate):
			bad(fmt.Sprintf("%s.forbidden_apis[%d]", key, j), "%q cannot be forbidden: clients need it to connect", api)
		}
	}
}

func validateRuleName(bad Bad, key, name string, seen map[string]string) {
	switch {
	case name == "":
		bad(key+".name", "required: names appear in error messages and the audit log")
	case name == "default":
		bad(key+".name", "\"default\" is reserved for the default decision")
	case seen[name] != "":
		bad(key+".name", "%q is also the name of %s", name, seen[name])
	default:
		seen[name] = key
	}
}

func validatePrincipals(bad Bad, key string, principals []string, required bool) {
	if required && len(principals) == 0 {
		bad(key+".principals", "required: list principal matchers, or \"*\" for everyone")
	}
	for j, s := range principals {
		if _, err := ParsePrincipal(s); err != nil {
			bad(fmt.Sprintf("%s.principals[%d]", key, j), "%v", err)
		}
	}
}

func validatePatterns(bad Bad, key string, patterns []string) {
	for j, s := range patterns {
		if _, err := ParsePattern(s); err != nil {
			bad(fmt.Sprintf("%s[%d]", key, j), "%v", err)
		}
	}
}

func validateProduceGovernance(bad Bad, key string, pr *ProduceGovernance) {
	if pr.RequiredAcks != "" {
		if _, err := ParseRequiredAcks(pr.RequiredAcks); err != nil {
			bad(key+".required_acks", "%v", err)
		}
	}
	for j, c := range pr.AllowedCompression {
		if !contains(CompressionCodecs(), strings.ToLower(c)) {
			bad(fmt.Sprintf("%s.allowed_compression[%d]", key, j), "%q is not a codec; valid: %s", c, strings.Join(CompressionCodecs(), ", "))
		}
	}
	if pr.MaxBatchBytes < 0 {
		bad(key+".max_batch_bytes", "%d: must be positive (0: no bound)", pr.MaxBatchBytes)
	}
}

func validateTopicGovernance(bad Bad, key string, tc *TopicGovernance) {
	if tc.NamePattern != "" {
		if _, err := ParsePattern(tc.NamePattern); err != nil {
			bad(key+".name_pattern", "%v", err)
		}
	}
	if tc.MaxPartitions < 0 {
		bad(key+".max_partitions", "%d: must be positive (0: no bound)", tc.MaxPartitions)
	}
	if tc.MinReplicationFactor < 0 {
		bad(key+".min_replication_factor", "%d: must be positive (0: no bound)", tc.MinReplicationFactor)
	}
	if tc.MaxReplicationFactor < 0 {
		bad(key+".max_replication_factor", "%d: must be positive (0: no bound)", tc.MaxReplicationFactor)
	}
	if tc.MaxReplicationFactor > 0 && tc.MinReplicationFactor > tc.MaxReplicationFactor {
		bad(key+".min_replication_factor", "%d is above max_replication_factor %d", tc.MinReplicationFactor, tc.MaxReplicationFactor)
	}
	for j, s := range tc.RequiredConfigs {
		if _, err := ParseConfigRequirement(s); err != nil {
			bad(fmt.Sprintf("%s.required_configs[%d]", key, j), "%v", err)
		}
	}
	validatePatterns(bad, key+".forbidden_configs", tc.ForbiddenConfigs)
}

// ruleKinds lists the configuration keys of the resource types r names.
func ruleKinds(r Rule) []string {
	var kinds []acl.ResourceType
	for _, rt := range acl.ResourceTypes() {
		if r.Names(rt) {
			kinds = append(kinds, rt)
		}
	}
	return resourceKeys(kinds)
}

func resourceKeys(types []acl.ResourceType) []string {
	var keys []string
	for _, rt := range types {
		keys = append(keys, rt.ConfigKey())
	}
	return keys
}

func appliesToAny(op acl.Operation, r Rule) bool {
	for _, rt := range op.AppliesTo() {
		if r.Names(rt) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
