// Package auth holds kproxy's authentication building blocks, all free of
// sockets except AuthenticateConn:
//
//   - a credential store of salted SCRAM credentials (never plaintext), which
//     PLAIN logins are verified against as well;
//   - server-side SASL sessions for PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512
//     (RFC 4616, RFC 5802, RFC 7677), and an Authenticator that speaks the
//     Kafka SaslHandshake / SaslAuthenticate messages around them;
//   - helpers for passthrough mode, for authenticating kproxy to its upstream,
//     for taking a principal from a client certificate and for resolving
//     secrets from files or the environment.
//
// No error or log field produced here ever carries a password, a proof, a
// stored key or any other secret; errors name users, mechanisms, keys, files
// and environment variables instead.
package auth
