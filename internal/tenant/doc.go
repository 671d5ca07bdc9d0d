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
// The engine asks RequestNeed and ResponseNeed per key and version, so
// what carries no name stays streamed; Streams lets it keep a Produce v13+
// streamed when its first bytes show there is nothing to map. Produce and
// Fetch are mapped raw (raw.go: names rewritten, record batches copied as
// they are, nothing copied at all when nothing changes); everything else
// decoded (MapRequest, MapResponse). Another tenant's topic id is sent up
// disguised (topicids.go), so the upstream answers UNKNOWN_TOPIC_ID, and
// comes back as the client sent it. Keys that carry names but are not for
// clients (broker-to-broker, controller, share-state APIs: refusedKeys)
// are refused. Keys acting on the whole upstream cluster (SCRAM
// credentials, client quotas, broker configs, reassignments, features,
// delegation tokens: clusterscope.go) are answered with the API's
// authorization error unless the engine marks the request as a cluster
// operator's (AsClusterOperator). Upstream error messages reach the tenant
// with its own names unprefixed, or withheld when they may name anything
// else (messages.go).
//
// The mapping of each API key is one entry of a table (api, built by
// apis); the topic APIs are in this package's topic files, the group,
// share-group, transaction and ACL APIs in groupAPIs (groups_table.go).
// The completeness test walks every kmsg request and response type and
// fails when a field holding a topic name, topic id, group id,
// transactional id, resource name or cluster id is handled by no entry,
// no refused key and no stated reason; the marker test fills each handled
// field, for every version, and fails unless the mapping changed it (and,
// where an entry maps raw too, unless the raw and decoded mappings give the
// same bytes).
package tenant
