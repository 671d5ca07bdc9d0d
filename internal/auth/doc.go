// Package auth holds kproxy's authentication building blocks, all free of
// sockets except AuthenticateConn:
//
//   - a credential store of salted SCRAM credentials (never plaintext), which
//     PLAIN logins are verified against as well;
//   - the SASL mechanism table (Mechanisms): each mechanism's server side
//     (what of listeners.sasl it needs, its exchange, whether kproxy can
//     follow it in passthrough mode) and upstream side (how kproxy logs in
//     with it), the built-in entries in mechanism.go followed by those a
//     program adds (package sasl);
//   - server-side SASL sessions for PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
//     (RFC 4616, RFC 5802, RFC 7677) and OAUTHBEARER, and an Authenticator
//     that speaks the Kafka SaslHandshake / SaslAuthenticate messages
//     around any entry's session;
//   - helpers for passthrough mode, for authenticating kproxy to its upstream,
//     for taking a principal from a client certificate and for resolving
//     secrets from files or the environment.
//
// No error or log field produced here ever carries a password, a proof, a
// stored key or any other secret; errors name users, mechanisms, keys, files
// and environment variables instead.
package auth
