// Package engine is kproxy's engine: the listeners of one cluster, the
// connection pairs they accept, and the filter chain every request and
// response passes. Package proxy builds one engine per cluster the file
// serves (the file, or each virtual cluster) and wires the policy, quotas,
// names and reloads into it; a program runs kproxy through proxy.Run.
//
// Entry points:
//
//   - New builds a Server from a validated configuration; Options add
//     features: WithFilters (a program's own filter.Filter values, placed
//     in the chain's phases), WithRequestObservers (timings of every
//     request), and the wiring package proxy uses for policy, quotas,
//     name mapping and virtual clusters.
//   - Server.Start binds the listeners and returns; Server.WaitReady waits
//     for upstream metadata; Server.Shutdown drains the pairs.
//   - Server.AdminHandler serves /healthz, /readyz, /metrics, /brokers and
//     /config for one Server; VirtualClustersAdminHandler does the same for
//     several, one per virtual cluster.
//
// Every client connection is paired with one upstream connection. Two
// goroutines serve a pair: one forwards requests upstream in the order the
// client sent them, pushing one entry per expected response onto a bounded
// in-flight queue; the other pops that queue and, for each entry, reads the
// matching response (or writes a response kproxy made itself) back to the
// client. Frames no filter wants are streamed as raw bytes; frames a filter
// wants are decoded once, passed through every interested filter, and
// encoded once.
package engine
