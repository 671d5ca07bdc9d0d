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
	var parts []string
	add := func(key string, values []string) {
		if len(values) > 0 {
			parts = append(parts, key+": "+list(values))
		}
	}
	if r.Name != "" {
		parts = append(parts, "name: "+r.Name)
	}
	add("principals", r.Principals)
	add("allow", r.Allow)
	add("deny", r.Deny)
	add("topics", r.Topics)
	add("groups", r.Groups)
	add("transactional_ids", r.TransactionalIDs)
	if r.Cluster {
		parts = append(parts, "cluster: true")
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func produceText(p *policyconfig.ProduceGovernance) string {
	var parts []string
	if p.RequiredAcks != "" {
		parts = append(parts, "required_acks: "+p.RequiredAcks)
	}
	if len(p.AllowedCompression) > 0 {
		parts = append(parts, "allowed_compression: "+list(p.AllowedCompression))
	}
	if p.MaxBatchBytes > 0 {
		parts = append(parts, fmt.Sprintf("max_batch_bytes: %d", p.MaxBatchBytes))
	}
	if p.RequireIdempotence {
		parts = append(parts, "require_idempotence: true")
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func topicChangesText(t *policyconfig.TopicGovernance) string {
	var parts []string
	if t.NamePattern != "" {
		parts = append(parts, "name_pattern: "+t.NamePattern)
	}
	if t.MaxPartitions > 0 {
		parts = append(parts, fmt.Sprintf("max_partitions: %d", t.MaxPartitions))
	}
	if t.MinReplicationFactor > 0 {
		parts = append(parts, fmt.Sprintf("min_replication_factor: %d", t.MinReplicationFactor))
	}
	if t.MaxReplicationFactor > 0 {
		parts = append(parts, fmt.Sprintf("max_replication_factor: %d", t.MaxReplicationFactor))
	}
	if len(t.RequiredConfigs) > 0 {
		parts = append(parts, "required_configs: "+list(t.RequiredConfigs))
	}
	if len(t.ForbiddenConfigs) > 0 {
		parts = append(parts, "forbidden_configs: "+list(t.ForbiddenConfigs))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
