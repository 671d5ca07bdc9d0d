// Package network holds the attacks of a hostile network peer: one that
// opens connections and holds them, writes half a PROXY protocol header or
// half a TLS handshake, exhausts kproxy's file descriptors, or chooses the
// TLS server name it asks for (a Unicode lookalike of a broker's name). It
// may also be the peer of a trusted load balancer, whose PROXY headers
// kproxy believes.
//
// Every test runs the real kproxy binary (advkit.Start) in front of a
// kfake cluster, over real sockets on 127.0.0.1, and asserts what the
// reference would answer: Apache Kafka's acceptor and max.connections
// limits, RFC 6066 for server names.
package network
