package largemessageconfig

import (
	"strconv"

	"github.com/kproxy/kproxy/filter"
)

// SectionName is the section's key: large_messages at the top level and
// virtual_clusters[].large_messages.
const SectionName = "large_messages"

// Section declares the `large_messages:` section (filter.Factory): its
// keys, defaults and checks. The server completes it with New and Reload.
//
// It runs in the program phase, added after record encryption: a request
// passes the filters of a phase in the order they were added and a
// response in the reverse order, so a produce is encrypted before its
// values are offloaded (the object holds the encrypted value) and a fetch
// is resolved before it is decrypted. It runs after the policy, so a
// denied produce never reaches the store, and before the quota stage,
// which counts the bytes sent to the cluster: the pointers.
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
		{Key: "", Meaning: "Large message offload ([docs/large-messages.md](large-messages.md)): large values of the matching topics' records are stored in an S3 bucket on produce and replaced by a pointer record (KafScale's LFS format); with `resolve_on_fetch` consumers through kproxy get the original values back. Topic rules apply at a reload, the store at a restart."},
		{Key: "store", DefaultNote: "required", Meaning: "The object store holding the offloaded values."},
		{Key: "store.s3", DefaultNote: "required", Meaning: "An S3 bucket (AWS S3, or a server speaking its API); credentials come from the usual AWS chain (environment, shared files, web identity, container and instance roles)."},
		{Key: "store.s3.endpoint", DefaultNote: "the region's AWS endpoint", Meaning: "S3 endpoint URL; plain `http://` only towards a loopback address."},
		{Key: "store.s3.bucket", DefaultNote: "required", Meaning: "The bucket; it must exist. Give it a lifecycle rule that follows the topics' retention (docs/large-messages.md)."},
		{Key: "store.s3.region", DefaultNote: "required", Meaning: "Region the requests are signed for."},
		{Key: "store.s3.path_style", Default: "false", Meaning: "Address the bucket in the URL's path instead of its host name; most S3-compatible servers want it."},
		{Key: "topics[]", DefaultNote: "required", Meaning: "Rules selecting the topics whose records are offloaded; the first rule matching a topic applies."},
		{Key: "topics[].match", DefaultNote: "required", Meaning: "Topic name pattern, in the policy's syntax (a glob, or `re:EXPR`), matched against the client's topic names."},
		{Key: "topics[].threshold_bytes", Default: strconv.Itoa(DefaultThresholdBytes), Meaning: "A record whose value is larger than this is offloaded (at least 1)."},
		{Key: "topics[].header_trigger", Default: DefaultHeaderTrigger, Meaning: "A record carrying a header of this name is offloaded whatever its size; the header is removed from the record forwarded (KafScale's trigger)."},
		{Key: "resolve_on_fetch", Default: "true", Meaning: "Consumers through kproxy receive the original values and headers of the matching topics' pointer records; `false` delivers the pointers as they are (for KafScale's SDKs)."},
		{Key: "pointer_format", Default: PointerFormatKafScale, Values: []string{PointerFormatKafScale}, Meaning: "The pointer record's format: KafScale's LFS envelope."},
		{Key: "max_object_bytes", Default: strconv.Itoa(DefaultMaxObjectBytes), Meaning: "A larger value is refused with MESSAGE_TOO_LARGE instead of being offloaded."},
	}
}
