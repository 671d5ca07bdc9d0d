// Package tlsconfig builds kproxy's TLS configurations: the server side of
// its listeners, with certificate and client-CA files reloaded when they
// change on disk, and the client side of its upstream connections.
//
// Both sides require TLS 1.2 or later.
package tlsconfig
