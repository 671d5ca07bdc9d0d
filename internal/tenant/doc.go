// Package tenant maps one virtual cluster's names to the upstream cluster's
// and back: topic, group and transactional-id prefixes, topic ids, internal
// topics and the cluster id.
//
// A tenant's clients use unprefixed names. The engine runs a Mapper at the
// name boundary: on a request after every filter (the policy sees the
// tenant's names), just before it is encoded for the upstream; on a
// response right after it is decoded, before any Verdict.OnResponse hook
// or response filter. Requests get the prefixes added; responses get them
// removed, and whatever is not this tenant's (another tenant's topic,
// group or transactional id, an internal topic) is removed from the
// response as if it did not exist.
//
// The mapping of each API key is one entry of a table (api, built by
// apis); the topic APIs are in this package's topic files, the group,
// share-group, transaction and ACL APIs in groupAPIs (groups_table.go).
// The completeness test walks every kmsg request and response type and
// fails when a field holding a topic name, topic id, group id or
// transactional id is handled by no entry.
package tenant
