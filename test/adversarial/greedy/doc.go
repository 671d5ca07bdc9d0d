// Package greedy attacks kproxy as a greedy client: one that reconnects,
// pipelines requests and opens parallel connections to get more than its
// quota, and never waits out the throttle time it is told. Each test runs
// the real kproxy binary in front of kfake and holds it to what an Apache
// Kafka broker does (KafkaApis' fetch throttling, KIP-219): the quota is
// the quota entity's across all its connections, and a fetch arriving
// while that entity is over it gets an empty response with the throttle
// time.
package greedy
