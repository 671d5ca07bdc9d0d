// Package proxy is kproxy's engine: listeners, connection pairs, in-flight
// tracking and upstream dialing.
//
// Every client connection is paired with one upstream connection. Two
// goroutines serve a pair: one forwards requests upstream in the order the
// client sent them, pushing one entry per expected response onto a bounded
// in-flight queue; the other pops that queue and, for each entry, reads the
// matching response (or writes a response kproxy made itself) back to the
// client. Frames no filter wants are streamed as raw bytes; frames a filter
// wants are decoded once, passed through every interested filter, and
// encoded once.
package proxy
