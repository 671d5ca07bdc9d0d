// Package token holds the attacks of a token holder: someone with access
// tokens signed by a key kproxy trusts, carrying claims of their choosing
// (names differing only in case, duplicate members, odd scope separators),
// who also runs or controls endpoints kproxy talks to (a JWKS URL that
// redirects, a token endpoint that lies about lifetimes or echoes what it
// is sent). Each test drives the real kproxy binary in front of kfake and
// asserts what Apache Kafka's OAUTHBEARER validator or the RFC would do.
package token
