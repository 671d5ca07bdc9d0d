// Package tenant attacks kproxy as a hostile tenant of a virtual cluster:
// a client of its own tenant's listeners, with no rights beyond them, that
// tries to read, change or detect another tenant's data and state in the
// shared Kafka cluster behind. Each test drives the real kproxy binary in
// front of kfake (or the real cluster CI starts) and asserts the answer
// Apache Kafka's broker gives a client with no access.
package tenant
