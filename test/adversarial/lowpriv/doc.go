// Package lowpriv holds the attacks of a principal with the least rights:
// a SASL user whom the policy lets read one topic and use one consumer
// group, and nothing else, connected through the real kproxy binary to a
// 3-node kfake cluster that also holds other topics, groups, committed
// offsets, configs and transactions.
//
// With hand-built requests it asks every API key kmsg knows about what it
// may not touch, and tries the side channels a broker's authorizer closes
// (listings, error messages, topic ids, validate-only creation, cursors,
// auto-creation). Each test asserts what Apache Kafka's authorizer would
// answer, that nothing outside the principal's rights appears anywhere in
// the answer's bytes, and that a request Kafka answers locally never
// reaches the cluster.
package lowpriv
