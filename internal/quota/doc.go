// Package quota is kproxy's client quotas (docs/quotas.md): Kafka's
// produce and fetch byte rates (KIP-13), request percentage (KIP-124),
// connection creation rate (KIP-612) and a connection count per principal,
// measured with Kafka's sampled-rate windows, with throttle times computed
// as a broker computes them. The proxy engine applies the throttle: it
// sets throttle_time_ms in the response that exceeded (KIP-219) and stops
// reading from the connection for that long, and answers a fetch that
// arrives while its principal is over the fetch quota (Binding.Check)
// with an empty throttled response, as a broker does.
//
// Rules come from policy.quotas. A connection is bound to the rules that
// match its principal when it is first seen, when its user or client id
// changes, and after a reload; a connection no rule matches has no
// binding and costs nothing.
package quota
