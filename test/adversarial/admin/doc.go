// Package admin holds the attacks of a network peer that reaches the admin
// endpoint (admin.listen): unauthenticated by design, like Kafka's JMX or
// a broker's metrics port, so whatever reaches it may send any request.
// It may ask /policy/explain huge or many questions at once, or hold the
// endpoint's connections: idle after a request, trickling a body, or never
// reading the answers.
//
// Every test runs the real kproxy binary (advkit.Start) in front of a
// kfake cluster over real sockets on 127.0.0.1, and asserts what HTTP
// (RFC 9110: 414, 429, 431) and Go's net/http server deadlines give as the
// reference: a clear status or a closed connection, and the probes and
// the Kafka data path served meanwhile.
package admin
