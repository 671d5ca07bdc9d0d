// Package mechanism holds the attacks on a SASL mechanism a program adds
// to kproxy (package sasl, proxy.Options.Mechanisms): a client that
// starts the exchange and never sends its next message, or sends a
// SaslAuthenticate larger than any token, and a mechanism whose server
// side is broken in ways a client can trigger: it blocks, panics, or
// returns a huge challenge or user name.
//
// kproxy runs the program's mechanism in the test's process, through
// proxy.Run as a program embedding it would, in front of a kfake cluster,
// and clients speak Kafka's SASL requests byte by byte. The reference is
// Apache Kafka's broker: SaslHandshake and SaslAuthenticate answered,
// SASL_AUTHENTICATION_FAILED then a close for a failed exchange, and
// sasl.server.max.receive.size for what a client may send before it has
// logged in.
package mechanism
