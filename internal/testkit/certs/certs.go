// Package certs writes a throw-away PKI (internal/testpki's CA, server and
// client certificates) into a test's temporary directory. It imports
// nothing of kproxy's but testpki, so the tests of packages kproxy's
// engine imports (internal/tlsconfig) can use it too.
package certs

import (
	"crypto/x509"
	"testing"

	"github.com/kproxy/kproxy/internal/testpki"
)

// Files are the PKI's files: the CA certificate clients trust, the server
// certificate (testpki.ServerLeaf: 127.0.0.1, ::1, localhost) and the
// client certificate (testpki.ClientLeaf), each a PEM file, keys
// unencrypted. CA is the authority itself, for tests that issue more
// certificates into Dir.
type Files struct {
	CA                    *testpki.CA
	Dir                   string
	CAFile                string
	ServerCert, ServerKey string
	ClientCert, ClientKey string
}

// New writes a new CA named "kproxy-test-ca" (ca.pem), server.pem,
// server-key.pem, client.pem and client-key.pem into a fresh temporary
// directory of t, failing the test on an error.
func New(t testing.TB) Files { return NewWithServer(t, testpki.ServerLeaf()) }

// NewWithServer is New with server as the server certificate's leaf (a
// wildcard name, say).
func NewWithServer(t testing.TB, server testpki.Leaf) Files {
	t.Helper()
	ca, err := testpki.NewCA("kproxy-test-ca")
	if err != nil {
		t.Fatal(err)
	}
	f := Files{CA: ca, Dir: t.TempDir()}
	if f.CAFile, err = ca.WriteCA(f.Dir, "ca"); err != nil {
		t.Fatal(err)
	}
	if f.ServerCert, f.ServerKey, err = ca.WriteLeaf(f.Dir, "server", server); err != nil {
		t.Fatal(err)
	}
	if f.ClientCert, f.ClientKey, err = ca.WriteLeaf(f.Dir, "client", testpki.ClientLeaf()); err != nil {
		t.Fatal(err)
	}
	return f
}

// Pool is a certificate pool trusting only the CA.
func (f Files) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(f.CA.Cert)
	return pool
}
