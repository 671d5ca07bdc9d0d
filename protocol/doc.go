// Package protocol is kproxy's knowledge of the Kafka wire format that sits
// around the message bodies: frame sizes, request and response headers,
// which versions use flexible (tagged-field) headers, and the glue that turns
// a body into a kmsg message and back.
//
// Its API table (APIs) is the one place that says, per API key, how to
// make and decode its messages, where its responses hold broker endpoints,
// and whether a response can be walked while it streams; the address
// rewriter, the engine's streamed walks and the test sniffer all read it.
//
// It is pure: no sockets, no goroutines, no mutable state (the table is
// built once and never changes). Everything here works on byte slices so
// that it can be tested and fuzzed without a network.
package protocol
