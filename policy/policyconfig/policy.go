// Package policyconfig is the configuration of kproxy's policy: the
// policy and audit sections of the file (docs/policy.md), with their
// quotas (docs/quotas.md). It declares the sections' types, their
// validation, defaults and reference rows; kproxy's configuration loader
// holds them at policy, audit and virtual_clusters[].policy.
package policyconfig

import "github.com/kproxy/kproxy/internal/acl"

// Policy is kproxy's authorization and governance policy (docs/policy.md).
// It is the one section of the file that is applied again, without a
// restart, when the file changes or kproxy gets SIGHUP.
type Policy struct {
	// Mode is "enforce" (the default) or "audit": log what would be denied
	// and forward everything unchanged.
	Mode string `yaml:"mode"`
	// Default is the decision when no rule allows or denies: "deny" (the
	// default, as Kafka's authorizer without allow.everyone.if.no.acl.found)
	// or "allow".
	Default string `yaml:"default"`
	// Rules grant or deny operations on resources to principals. A deny
	// that matches wins over any allow.
	Rules []Rule `yaml:"rules"`
	// Governance constrains what allowed requests may do.
	Governance []Governance `yaml:"governance"`
	// BrokerDefaults declares the upstream's topic defaults, which a
	// topic created without an explicit partition count or replication
	// factor (CreateTopics with -1, or auto-creation) gets. Without it,
	// such a topic fails every topic_changes bound on what kproxy cannot
	// know.
	BrokerDefaults *BrokerDefaults `yaml:"broker_defaults"`
	// Quotas are Kafka-style client quotas (quota.go, docs/quotas.md).
	Quotas []Quota `yaml:"quotas"`
	// QuotaWindows is how quota rates are measured (Kafka's defaults when
	// left out).
	QuotaWindows *QuotaWindows `yaml:"quota_windows"`
	// QuotaReplicas splits every quota across this many kproxy replicas:
	// each enforces quota/QuotaReplicas (default 1).
	QuotaReplicas int `yaml:"quota_replicas"`
	// QuotaAuditSampleRate is the share (0 to 1) of throttled requests
	// written to the audit log; default DefaultQuotaAuditSampleRate.
	QuotaAuditSampleRate *float64 `yaml:"quota_audit_sample_rate"`
}

// BrokerDefaults are the upstream brokers' num.partitions and
// default.replication.factor, as the operator declares them; 0: unknown.
type BrokerDefaults struct {
	NumPartitions            int32 `yaml:"num_partitions"`
	DefaultReplicationFactor int16 `yaml:"default_replication_factor"`
}

// Policy modes and defaults.
const (
	PolicyModeEnforce  = "enforce"
	PolicyModeAudit    = "audit"
	PolicyDefaultDeny  = "deny"
	PolicyDefaultAllow = "allow"
)

// Rule is one authorization rule: who (Principals) may or may not do what
// (Allow, Deny) to which resources (Topics, Groups, TransactionalIDs,
// Cluster).
type Rule struct {
	// Name identifies the rule in error messages and the audit log.
	Name string `yaml:"name"`
	// Principals: "User:NAME", "client_id:ID", "cidr:NET", "cn:NAME",
	// "listener:NAME" or "*". NAME and ID are patterns (see Pattern).
	Principals []string `yaml:"principals"`
	// Allow and Deny are Kafka ACL operations (see acl.ParseOperation).
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
	// Resource patterns the operations apply to.
	Topics           []string `yaml:"topics"`
	Groups           []string `yaml:"groups"`
	TransactionalIDs []string `yaml:"transactional_ids"`
	// Cluster makes the rule apply to the cluster resource.
	Cluster bool `yaml:"cluster"`
}

// Patterns is the rule's list of patterns for resources of type rt. The
// cluster has no patterns: Cluster says whether the rule names it.
func (r Rule) Patterns(rt acl.ResourceType) []string {
	switch rt {
	case acl.Topic:
		return r.Topics
	case acl.Group:
		return r.Groups
	case acl.TransactionalID:
		return r.TransactionalIDs
	}
	return nil
}

// Names reports whether the rule applies to resources of type rt.
func (r Rule) Names(rt acl.ResourceType) bool {
	if rt == acl.Cluster {
		return r.Cluster
	}
	return len(r.Patterns(rt)) > 0
}

// Governance is one named set of constraints on requests the rules
// allowed. It applies to connections whose principal matches Principals
// (all when empty) and, for produce and topic constraints, to topics
// matching Topics (all when empty).
type Governance struct {
	Name       string   `yaml:"name"`
	Principals []string `yaml:"principals"`
	Topics     []string `yaml:"topics"`
	// Produce constrains Produce requests.
	Produce *ProduceGovernance `yaml:"produce"`
	// TopicChanges constrains CreateTopics, CreatePartitions, AlterConfigs
	// and IncrementalAlterConfigs on topics.
	TopicChanges *TopicGovernance `yaml:"topic_changes"`
	// ClientIDPattern: a request whose client id does not match closes its
	// connection.
	ClientIDPattern string `yaml:"client_id_pattern"`
	// ForbiddenAPIs are Kafka API names (as kmsg spells them, e.g.
	// "DeleteRecords"; case-insensitive) answered with POLICY_VIOLATION.
	ForbiddenAPIs []string `yaml:"forbidden_apis"`
}

// ProduceGovernance constrains Produce requests.
type ProduceGovernance struct {
	// RequiredAcks is the least durable acks a producer may ask for: "all"
	// (or -1: only acks=all passes), 1 (acks=1 or all) or 0 (anything).
	RequiredAcks string `yaml:"required_acks"`
	// AllowedCompression lists codecs batches may use: none, gzip, snappy,
	// lz4, zstd. Empty allows all.
	AllowedCompression []string `yaml:"allowed_compression"`
	// MaxBatchBytes bounds each record batch's size on the wire; 0: no bound.
	MaxBatchBytes int `yaml:"max_batch_bytes"`
	// RequireIdempotence refuses batches without a producer id.
	RequireIdempotence bool `yaml:"require_idempotence"`
}

// TopicGovernance constrains topic creation and alteration.
type TopicGovernance struct {
	// NamePattern must match the name of every created topic.
	NamePattern string `yaml:"name_pattern"`
	// MaxPartitions bounds a topic's partition count (CreateTopics and the
	// new total in CreatePartitions); 0: no bound.
	MaxPartitions int32 `yaml:"max_partitions"`
	// Replication factor bounds for CreateTopics; 0: no bound.
	MinReplicationFactor int16 `yaml:"min_replication_factor"`
	MaxReplicationFactor int16 `yaml:"max_replication_factor"`
	// RequiredConfigs are "KEY OP VALUE" requirements, OP one of
	// = != < <= > >= (numeric when both sides are numbers), e.g.
	// "min.insync.replicas >= 2". The key must be set, and satisfy OP.
	RequiredConfigs []string `yaml:"required_configs"`
	// ForbiddenConfigs are config key patterns that may not be set.
	ForbiddenConfigs []string `yaml:"forbidden_configs"`
}

// Audit configures the policy audit log.
type Audit struct {
	// Output is "stdout" (the default) or a file path, appended to.
	Output string `yaml:"output"`
	// LogAllowed logs every decision, not only denials.
	LogAllowed bool `yaml:"log_allowed"`
	// BufferSize is how many lines may wait for the writer before new ones
	// are dropped (and counted); the data path never waits. Default 8192.
	BufferSize int `yaml:"buffer_size"`
}

// DefaultAuditBufferSize is Audit.BufferSize when left out.
const DefaultAuditBufferSize = 8192

// AuditStdout is the Audit.Output value for standard output.
const AuditStdout = "stdout"
