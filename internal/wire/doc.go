// Package wire is the engine's knowledge of the Kafka wire format beyond
// the public helpers of package protocol: the API table's implementation
// (per-key rows, versions, wire shapes learned from kmsg), frame and header
// codecs with their error forms, decode-size bounds, the streamed walks
// that find a response's top-level tags without holding it, produce
// summaries and acks, and the fetch- and share-session fields the engine
// reads in place.
//
// Package protocol re-exports the part a program built on kproxy needs;
// everything else here may change with the engine.
//
// It is pure: no sockets, no goroutines, no mutable state (the table is
// built once and never changes). Everything here works on byte slices so
// that it can be tested and fuzzed without a network.
package wire
