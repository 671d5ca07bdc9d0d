package policyconfig

import (
	"slices"

	"github.com/kproxy/kproxy/filter"
)

// policyRows document the policy section's keys, relative to it, in the
// order docs/configuration.md lists them.
func policyRows() []filter.KeyDoc {
	return slices.Concat(policyKeys(), governanceKeys(), quotaKeys())
}

func policyKeys() []filter.KeyDoc {
	return slices.Concat(
		[]filter.KeyDoc{
			{Key: "", Meaning: "authorization and governance of every request, as Kafka's authorizer does (see [docs/policy.md](policy.md)); SIGHUP or an edit of the file reloads it without a restart, and an invalid file keeps the old policy"},
			{Key: "mode", Default: PolicyModeEnforce, Values: []string{PolicyModeEnforce, PolicyModeAudit}, Meaning: "`enforce`, or `audit`: log would-be denials, forward everything"},
			{Key: "default", Default: PolicyDefaultDeny, Values: []string{PolicyDefaultDeny, PolicyDefaultAllow}, Meaning: "decision when no rule matches: `deny` or `allow`"},
		},
		filter.KeysUnder("rules[]", []filter.KeyDoc{
			{Key: "", Default: "[]", Meaning: "grants and denials of operations on resources to principals; a deny that matches wins over any allow (see [docs/policy.md](policy.md#rules))"},
			{Key: "name", DefaultNote: "required", Meaning: "names the rule in error messages, metrics and the audit log; unique across rules and governance, not `default`"},
			{Key: "principals", Meaning: "who the rule is for: `User:NAME`, `client_id:ID`, `cidr:NET`, `cn:NAME`, `listener:NAME`, `Claim:NAME=VALUE`, `VirtualCluster:NAME` or `*`; names are patterns (see [docs/policy.md](policy.md#principals))"},
			{Key: "allow", Meaning: "operations allowed (`read`, `write`, `create`, `delete`, `alter`, `describe`, `describe_configs`, `alter_configs`, `idempotent_write`, `cluster_action`, `all`; Kafka's spellings such as `DescribeConfigs` too), with what Kafka implies with them"},
			{Key: "deny", Meaning: "operations denied, the same names; a deny implies nothing"},
			{Key: "topics", Meaning: "topic name patterns the operations apply to: globs (`*`, `?`) or `re:EXPR` regular expressions (unanchored)"},
			{Key: "groups", Meaning: "group id patterns, likewise"},
			{Key: "transactional_ids", Meaning: "transactional id patterns, likewise"},
			{Key: "cluster", Default: "false", Meaning: "the rule also applies to the cluster resource"},
		}),
		filter.KeysUnder("broker_defaults", []filter.KeyDoc{
			{Key: "", Meaning: "the upstream's topic defaults, which a topic created with -1 partitions or replicas, or auto-created, gets; without it such a topic fails every `topic_changes` bound on what kproxy cannot know"},
			{Key: "num_partitions", DefaultNote: "unknown", Meaning: "the upstream's `num.partitions`: a topic created with -1 partitions or auto-created is checked against `max_partitions` with it (unknown: refused)"},
			{Key: "default_replication_factor", DefaultNote: "unknown", Meaning: "the upstream's `default.replication.factor`, likewise for the replication factor bounds"},
		}),
		filter.KeysUnder("quota_windows", []filter.KeyDoc{
			{Key: "", Meaning: "how quota rates are measured (Kafka's defaults when left out)"},
			{Key: "samples", Default: "11", Meaning: "windows a quota rate is measured over, 2 to 1000 (Kafka's `quota.window.num`)"},
			{Key: "size", Default: "1s", Meaning: "one quota window, 10ms to 1h (Kafka's `quota.window.size.seconds`)"},
		}),
		[]filter.KeyDoc{
			{Key: "quota_replicas", Default: "1", Meaning: "kproxy replicas sharing the quotas: each enforces quota / N (replicas share no quota state, as brokers share none)"},
			{Key: "quota_audit_sample_rate", Default: "0.01", Meaning: "share of throttled requests written to `audit.output` as `\"decision\":\"throttle\"` lines (0 to 1)"},
		},
	)
}

func governanceKeys() []filter.KeyDoc {
	return slices.Concat(
		filter.KeysUnder("governance[]", []filter.KeyDoc{
			{Key: "", Default: "[]", Meaning: "constraints on what allowed requests may do; all matching entries apply, and the first violation is reported naming the entry (see [docs/policy.md](policy.md#governance))"},
			{Key: "name", DefaultNote: "required", Meaning: "names the entry in error messages and the audit log; unique across rules and governance"},
			{Key: "principals", DefaultNote: "everyone", Meaning: "principals the entry applies to, as in rules"},
			{Key: "topics", DefaultNote: "every topic", Meaning: "topic patterns the produce and topic constraints apply to"},
		}),
		filter.KeysUnder("governance[].produce", []filter.KeyDoc{
			{Key: "", Meaning: "constraints on Produce requests"},
			{Key: "required_acks", DefaultNote: "any", Meaning: "the least durable acks a producer may ask for: `all` (or `-1`: only acks=all passes), `1` (acks=1 or all) or `0` (anything); otherwise `INVALID_REQUIRED_ACKS`, and a refused `acks=0` produce closes the connection"},
			{Key: "allowed_compression", DefaultNote: "all", Meaning: "codecs record batches may use: `none`, `gzip`, `snappy`, `lz4`, `zstd` (read from the batch header; nothing is decompressed)"},
			{Key: "max_batch_bytes", Default: "0", Meaning: "bound on each record batch's size on the wire (`MESSAGE_TOO_LARGE` beyond it); 0: no bound"},
			{Key: "require_idempotence", Default: "false", Meaning: "refuse batches without a producer id"},
		}),
		filter.KeysUnder("governance[].topic_changes", []filter.KeyDoc{
			{Key: "", Meaning: "constraints on CreateTopics, CreatePartitions, AlterConfigs and IncrementalAlterConfigs on topics, and on auto-creation"},
			{Key: "name_pattern", DefaultNote: "any name", Meaning: "pattern every created topic's name must match"},
			{Key: "max_partitions", Default: "0", Meaning: "bound on a topic's partition count (CreateTopics, and the new total in CreatePartitions); 0: no bound"},
			{Key: "min_replication_factor", Default: "0", Meaning: "lower bound on a created topic's replication factor; 0: no bound"},
			{Key: "max_replication_factor", Default: "0", Meaning: "upper bound, likewise"},
			{Key: "required_configs", Default: "[]", Meaning: "`KEY OP VALUE` requirements, OP one of `=` `!=` `<` `<=` `>` `>=` (numeric when both sides are numbers), such as `min.insync.replicas >= 2`: the key must be set, and satisfy OP"},
			{Key: "forbidden_configs", Default: "[]", Meaning: "config key patterns that may not be set"},
		}),
		filter.KeysUnder("governance[]", []filter.KeyDoc{
			{Key: "client_id_pattern", DefaultNote: "any", Meaning: "pattern every request's client id must match; otherwise the connection is closed, as Kafka closes a rejected client"},
			{Key: "forbidden_apis", Default: "[]", Meaning: "Kafka API names (as kmsg spells them, such as `DeleteRecords`; case-insensitive) answered with `POLICY_VIOLATION`; ApiVersions and the SASL APIs cannot be forbidden"},
		}),
	)
}

func quotaKeys() []filter.KeyDoc {
	return filter.KeysUnder("quotas[]", []filter.KeyDoc{
		{Key: "", Default: "[]", Meaning: "Kafka-style client quotas; for each kind of limit, the first matching rule that sets it applies; a policy of quotas alone authorizes nothing (see [docs/quotas.md](quotas.md))"},
		{Key: "name", DefaultNote: "required", Meaning: "names the rule in metrics and audit lines"},
		{Key: "principals", Meaning: "principals the rule applies to, as in policy rules; `*` is everyone (Kafka's default quota)"},
		{Key: "produce_bytes_per_second", Default: "0", Meaning: "Kafka's `producer_byte_rate`: Produce request bytes per second; 0: no limit"},
		{Key: "fetch_bytes_per_second", Default: "0", Meaning: "Kafka's `consumer_byte_rate`: Fetch response bytes per second; 0: no limit"},
		{Key: "request_percentage", Default: "0", Meaning: "Kafka's `request_percentage`: the share of one thread's time (100 = one whole thread) kproxy may spend on the principal's requests per quota window; 0: no limit"},
		{Key: "connection_creation_rate", Default: "0", Meaning: "Kafka's `connection_creation_rate`: new connections per second; 0: no limit"},
		{Key: "max_connections", Default: "0", Meaning: "the principal's open connections at once; 0: no limit"},
	})
}

func auditKeys() []filter.KeyDoc {
	return []filter.KeyDoc{
		{Key: "", Meaning: "where the policy's decisions are logged, one JSON line each (see [docs/policy.md](policy.md#audit-log))"},
		{Key: "output", Default: AuditStdout, Meaning: "`stdout` or a file path (appended)"},
		{Key: "log_allowed", Default: "false", Meaning: "log every decision, not only denials"},
		{Key: "buffer_size", Default: "8192", Meaning: "audit lines queued before new ones are dropped (never blocks requests)"},
	}
}
