// Package tenant attacks kproxy as a hostile tenant of a virtual cluster:
// a client that logged in to its own virtual cluster and uses every API
// Kafka has to reach, learn about or change what belongs to another tenant
// of the same upstream cluster, or to the cluster itself (fetch and share
// sessions, names, error messages, cluster-wide admin APIs, ACLs). Each
// test runs the real kproxy binary in front of kfake (or the real cluster
// CI starts) and asserts what Apache Kafka's broker and authorizer would
// answer a principal with the tenant's rights, and that nothing reached
// the upstream that should not have.
package tenant
