package policy

import (
	"fmt"
	"strings"

	"github.com/kproxy/kproxy/policy/policyconfig"
)

// How explain and diff write principals, resources, operations, rules and
// governance: as the configuration file writes them.

// describePrincipal is p with the attributes rules match on that are set.
func describePrincipal(p *Principal) string {
	parts := []string{p.String()}
	if p.ClientID != "" {
		parts = append(parts, "client_id:"+p.ClientID)
	}
	if p.Addr.IsValid() {
		parts = append(parts, "host "+p.Addr.String())
	}
	if p.Listener != "" {
		parts = append(parts, "listener:"+p.Listener)
	}
	if p.CN != "" {
		parts = append(parts, "cn:"+p.CN)
	}
	if p.VirtualCluster != "" {
		parts = append(parts, "VirtualCluster:"+p.VirtualCluster)
	}
	for k, vs := range p.Claims {
		for _, v := range vs {
			parts = append(parts, "Claim:"+k+"="+v)
		}
	}
	return strings.Join(parts, ", ")
}

func resourceWord(rt ResourceType) string { return strings.ReplaceAll(resourceText(rt), "_", " ") }

// resourceText is a resource type as explain and diff write it: topic,
// group, transactional_id or cluster.
func resourceText(rt ResourceType) string {
	switch rt {
	case ResTopic:
		return "topic"
	case ResGroup:
		return "group"
	case ResTransactionalID:
		return "transactional_id"
	}
	return "cluster"
}

// operationText is an operation as explain and diff write it: its
// configuration name in capitals (WRITE, DESCRIBE_CONFIGS).
func operationText(op Operation) string { return strings.ToUpper(op.ConfigName()) }

// list writes values as a YAML flow sequence.
func list(values []string) string { return "[" + strings.Join(values, ", ") + "]" }

// ruleText is r as a YAML flow mapping, the keys in the file's order.
func ruleText(r policyconfig.Rule) string {
	var m flowMap
	m.text("name", r.Name)
	m.list("principals", r.Principals)
	m.list("allow", r.Allow)
	m.list("deny", r.Deny)
	m.list("topics", r.Topics)
	m.list("groups", r.Groups)
	m.list("transactional_ids", r.TransactionalIDs)
	m.flag("cluster", r.Cluster)
	return m.String()
}

func produceText(p *policyconfig.ProduceGovernance) string {
	var m flowMap
	m.text("required_acks", p.RequiredAcks)
	m.list("allowed_compression", p.AllowedCompression)
	m.count("max_batch_bytes", int64(p.MaxBatchBytes))
	m.flag("require_idempotence", p.RequireIdempotence)
	return m.String()
}

func topicChangesText(t *policyconfig.TopicGovernance) string {
	var m flowMap
	m.text("name_pattern", t.NamePattern)
	m.count("max_partitions", int64(t.MaxPartitions))
	m.count("min_replication_factor", int64(t.MinReplicationFactor))
	m.count("max_replication_factor", int64(t.MaxReplicationFactor))
	m.list("required_configs", t.RequiredConfigs)
	m.list("forbidden_configs", t.ForbiddenConfigs)
	return m.String()
}

// flowMap builds a YAML flow mapping of a configuration entry, leaving out
// the keys left at their zero value, as the file would.
type flowMap []string

func (m *flowMap) text(key, value string) {
	if value != "" {
		*m = append(*m, key+": "+value)
	}
}

func (m *flowMap) list(key string, values []string) {
	if len(values) > 0 {
		*m = append(*m, key+": "+list(values))
	}
}

func (m *flowMap) count(key string, n int64) {
	if n > 0 {
		*m = append(*m, fmt.Sprintf("%s: %d", key, n))
	}
}

func (m *flowMap) flag(key string, set bool) {
	if set {
		*m = append(*m, key+": true")
	}
}

func (m flowMap) String() string { return "{" + strings.Join(m, ", ") + "}" }
