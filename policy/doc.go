// Package policy is kproxy's authorization and governance feature: a
// request filter that decides, per principal and per resource, what each
// request may do, following Kafka's ACL model (operations on Topic, Group,
// TransactionalId and Cluster resources; deny wins over allow).
//
// Entry points:
//
//   - New builds an Enforcer from a validated policy section
//     (policyconfig.Policy); the Enforcer is the filter.Filter a proxy
//     runs in filter.PhaseAuthorize. It splits partly denied requests,
//     answers wholly denied ones itself, and merges the per-resource
//     errors it made into upstream responses in the order the client
//     asked. Governance rules constrain what allowed requests carry (acks,
//     compression, topic shapes, configs, client ids, forbidden APIs).
//     Enforcer.Reload, or ReloadApplier for a config.Reloader, swaps in a
//     new policy atomically.
//   - NewChecker answers Questions about a policy outside the data path,
//     with the data path's own code: Checker.Decide gives the Decision,
//     Checker.Explain says why (kproxy policy explain). Diff compares two
//     policies by the accesses they grant (kproxy policy diff).
//   - The audit log writes one JSON line per denial (optionally per
//     decision) from a background goroutine; the data path never waits.
//     NewAuditLog opens one for a cluster without an Enforcer.
//   - ConnMatcher and QuotaMatcher match principals as rules do, for the
//     features that name principals too (cluster operators, quotas).
//   - APIRules, ImpliedOperations and RevealingAPIs expose the operation
//     table: every API key kmsg knows, the operations and resource types
//     it needs as Kafka's authorizer does, and the response fields that can
//     name a resource. The handlers enforce exactly that table;
//     docs/policy.md's tables are generated from it by go generate ./policy.
//
// Imports are one-way: policy uses config, filter, protocol and kmsg; the
// proxy knows it only as a filter.
package policy

//go:generate go run ./internal/doctables -doc ../docs/policy.md
