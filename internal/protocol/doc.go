// Package protocol is kproxy's knowledge of the Kafka wire format that sits
// around the message bodies: frame sizes, request and response headers,
// which versions use flexible (tagged-field) headers, and the glue that turns
// a body into a kmsg message and back.
//
// It is pure: no sockets, no goroutines, no state. Everything here works on
// byte slices so that it can be tested and fuzzed without a network.
package protocol
