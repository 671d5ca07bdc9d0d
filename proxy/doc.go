// Package proxy runs kproxy: a connection-pair proxy between Kafka
// clients and a cluster. Each client connection is paired with one
// upstream connection; requests pass a chain of filters in named phases
// (package filter) on their way to the cluster and responses pass it
// back, with the brokers' addresses in Metadata and FindCoordinator
// rewritten to kproxy's listeners (package rewrite) and the policy
// (package policy) deciding what each principal may do. Frames no filter
// wants stream through as raw bytes; the rest are decoded once and
// encoded once (package protocol).
//
// A program runs kproxy with Run, and extends it the way CoreDNS plugins
// and Caddy modules extend those servers: there is no registry to link
// into; the program passes its filters, its filters' configuration
// sections (filter.Factory) and its SASL mechanisms (package sasl) in
// Options.
//
//	err := proxy.Run(ctx, proxy.Options{
//		ConfigPath: "kproxy.yaml",
//		Filters:    []filter.Filter{myFilter{}}, // see examples/requireheader
//	})
//
// Run does what the kproxy command does: it loads and validates the
// configuration file, starts the embedded cluster if the file asks for
// one, serves the listeners and the admin endpoint, enforces and reloads
// the policy, and drains in-flight requests when ctx ends. Validate
// checks a file as kproxy validate does.
package proxy
