package tenant

import "strings"

// Names is one virtual cluster's prefixes. An empty prefix leaves that kind
// of name unchanged (internal topics stay hidden regardless).
type Names struct{ Topic, Group, TransactionalID string }

// IsInternalTopic reports whether name is one of the upstream's internal
// topics: never visible to a tenant, whatever its prefix. (A topic the
// upstream marks internal in Metadata is hidden too.)
func IsInternalTopic(name string) bool {
	switch name {
	case "__consumer_offsets", "__transaction_state", "__share_group_state",
		"__cluster_metadata", "__remote_log_metadata":
		return true
	}
	return false
}

// hiddenMark starts the upstream name of an internal topic a tenant with
// no topic prefix asks for: the character is illegal in topic names, so the
// upstream answers INVALID_TOPIC_EXCEPTION or UNKNOWN_TOPIC_OR_PARTITION
// and never touches the internal topic; DownTopic takes it off again.
const hiddenMark = "!"

// UpTopic is the upstream's name of the tenant's topic name. The empty
// name stays empty, so the upstream rejects it as it would without a
// prefix (a bare prefix is a legal topic name).
func (m *Mapper) UpTopic(name string) string {
	if name == "" {
		return ""
	}
	if m.names.Topic == "" && IsInternalTopic(name) {
		return hiddenMark + name
	}
	return m.names.Topic + name
}

// DownTopic is the tenant's name of the upstream's topic name; ok is false
// when the topic is not this tenant's (another prefix, an internal topic),
// which the caller must then hide.
func (m *Mapper) DownTopic(name string) (string, bool) {
	if hidden, ok := strings.CutPrefix(name, hiddenMark); ok && IsInternalTopic(hidden) && m.names.Topic == "" {
		return hidden, true
	}
	if IsInternalTopic(name) {
		return "", false
	}
	return cutPrefix(m.names.Topic, name)
}

// UpGroup is the upstream's name of the tenant's group id. The empty id is
// the tenant's own too (the bare prefix): Kafka accepts "" for offset
// commits, fetches, describes and deletes (KAFKA-6773), so kept empty it
// would be one group shared by every tenant.
func (m *Mapper) UpGroup(id string) string { return m.names.Group + id }

// DownGroup is the tenant's name of the upstream's group id (the bare
// prefix is the tenant's empty id); ok is false when the group is not this
// tenant's.
func (m *Mapper) DownGroup(id string) (string, bool) {
	if m.names.Group == "" {
		return id, true
	}
	return strings.CutPrefix(id, m.names.Group)
}

// UpTxnID is the upstream's name of the tenant's transactional id ("" stays
// "").
func (m *Mapper) UpTxnID(id string) string { return addPrefix(m.names.TransactionalID, id) }

// DownTxnID is the tenant's name of the upstream's transactional id; ok is
// false when the id is not this tenant's.
func (m *Mapper) DownTxnID(id string) (string, bool) {
	return cutPrefix(m.names.TransactionalID, id)
}

func addPrefix(prefix, name string) string {
	if name == "" {
		return ""
	}
	return prefix + name
}

// cutPrefix is name without prefix; false when name lacks it or is the
// bare prefix (which no tenant's name maps to).
func cutPrefix(prefix, name string) (string, bool) {
	if prefix == "" {
		return name, true
	}
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" {
		return "", false
	}
	return rest, true
}
