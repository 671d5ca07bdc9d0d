// Package policy is kproxy's authorization and governance feature: a
// request filter that decides, per principal and per resource, what each
// request may do, following Kafka's ACL model (operations on Topic, Group,
// TransactionalId and Cluster resources; deny wins over allow).
//
// The pieces, each in its own file:
//
//   - Compile turns the YAML policy into an immutable ruleEngine that answers
//     Decide(principal, operation, resource type, name).
//   - The operation table (table.go) maps every API key kmsg knows to the
//     operation/resource pairs it needs, as Kafka's authorizer does; the
//     handlers enforce exactly that table, and docs/policy.md's tables are
//     generated from it (APIRules, ImpliedOperations, RevealingAPIs) by
//     go generate ./policy.
//   - Enforcer is the filter.Filter the proxy runs: it registers a typed
//     request handler per row of the operation table. It splits partly
//     denied requests, answers wholly denied ones itself, and merges
//     synthesized per-resource errors into upstream responses in the order
//     the client asked. Reload swaps in a new policy atomically.
//   - Governance constrains allowed requests (acks, compression, topic
//     shapes, configs, client ids, forbidden APIs).
//   - The audit log writes one JSON line per denial (optionally per
//     decision) from a background goroutine; the data path never waits.
//
// Imports are one-way: policy uses config, filter, protocol and kmsg; the
// proxy knows it only as a filter.
package policy

//go:generate go run ./internal/doctables -doc ../docs/policy.md
