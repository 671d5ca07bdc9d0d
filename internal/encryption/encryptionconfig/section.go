package encryptionconfig

import (
	"github.com/kproxy/kproxy/filter"
)

// SectionName is the section's key: encryption at the top level and
// virtual_clusters[].encryption.
const SectionName = "encryption"

// Section declares the `encryption:` section (filter.Factory): its keys,
// defaults and checks. The server completes it with New and Reload, since
// building the filter (package encryption) needs what only the server
// knows: the virtual cluster's topic prefix, with which records are bound
// to the broker-side topic names.
// It runs in the program phase: after the policy, so a denied produce
// never reaches the KMS, and before the quota stage, which counts the
// bytes sent to the cluster.
func Section() filter.Factory[Config] {
	return filter.Factory[Config]{
		Section:  SectionName,
		Phase:    filter.PhaseProgram,
		Keys:     sectionKeys(),
		Validate: filter.SetDefaultsThen((*Config).validate),
	}
}

func sectionKeys() []filter.KeyDoc {
	return []filter.KeyDoc{
		{Key: "", Meaning: "Record encryption ([docs/encryption.md](encryption.md)): values and header values of the matching topics' records are encrypted on produce and decrypted on fetch, under data keys from a KMS."},
		{Key: "kms", DefaultNote: "required", Meaning: "The KMS holding the key-encryption keys."},
		{Key: "kms.aws_kms", DefaultNote: "required", Meaning: "AWS KMS, or a KMS speaking its API; credentials come from the usual AWS chain (environment, shared files, web identity, container and instance roles)."},
		{Key: "kms.aws_kms.endpoint", DefaultNote: "the region's public endpoint", Meaning: "KMS endpoint URL; plain `http://` only towards a loopback address."},
		{Key: "kms.aws_kms.region", DefaultNote: "required", Meaning: "AWS region the requests are signed for."},
		{Key: "topics[]", DefaultNote: "required", Meaning: "Rules selecting the topics whose records are encrypted; the first rule matching a topic applies."},
		{Key: "topics[].match", DefaultNote: "required", Meaning: "Topic name pattern, in the policy's syntax (a glob, or `re:EXPR`), matched against the client's topic names."},
		{Key: "topics[].key", DefaultNote: "required", Meaning: "Key-encryption key: a key id, ARN or alias; `$(topic)` and `$(virtual_cluster)` are replaced by the names mapped into alias syntax."},
		{Key: "topics[].encrypt", Default: "[value]", Values: []string{PartValue, PartHeaders}, Meaning: "Which parts are encrypted: record values, header values, or both; keys stay in the clear."},
		{Key: "dek", Meaning: "Bounds on reusing one data key."},
		{Key: "dek.max_age", Default: "1h", Meaning: "A data key encrypts no record later than this after the KMS handed it out (at least 1s)."},
		{Key: "dek.max_records", Default: "5000000", Meaning: "A data key encrypts at most this many records."},
		{Key: "on_missing_key", Default: MissingKeyReject, Values: []string{MissingKeyReject, MissingKeyPassthrough}, Meaning: "What a produce gets when the topic's key does not exist or is disabled: `reject` refuses the partition with a retriable error, `passthrough` stores the records in the clear (logged once per topic)."},
	}
}
