package tlsconfig

import (
	"crypto/tls"
	"fmt"
)

// Client-certificate policies, as written in the configuration.
const (
	ClientAuthNone    = "none"
	ClientAuthRequest = "request"
	ClientAuthRequire = "require"
)

// ParseClientAuth maps a policy to Go's: "none" (or "") asks for no
// certificate; "request" asks for one and verifies it if given (Kafka's
// ssl.client.auth=requested); "require" refuses clients without a valid one.
func ParseClientAuth(policy string) (tls.ClientAuthType, error) {
	switch policy {
	case "", ClientAuthNone:
		return tls.NoClientCert, nil
	case ClientAuthRequest:
		return tls.VerifyClientCertIfGiven, nil
	case ClientAuthRequire:
		return tls.RequireAndVerifyClientCert, nil
	}
	return 0, fmt.Errorf("client auth %q: want none, request or require", policy)
}

// ServerConfig returns the TLS configuration of a listener serving the key
// pair in certFile/keyFile (PEM; the certificate file may hold the chain),
// and the Reloader that keeps it, and the client-CA pool, current (see
// Reloader). clientAuth is none, request or require; the latter two need
// clientCAFile, the PEM bundle client certificates are verified against.
//
// Do not modify the returned config once it serves: per-handshake copies
// are cloned from it.
func ServerConfig(certFile, keyFile, clientAuth, clientCAFile string) (*tls.Config, *Reloader, error) {
	if certFile == "" || keyFile == "" {
		return nil, nil, fmt.Errorf("server TLS: both a certificate file and a key file are required")
	}
	policy, err := ParseClientAuth(clientAuth)
	if err != nil {
		return nil, nil, fmt.Errorf("server TLS: %w", err)
	}
	if policy != tls.NoClientCert && clientCAFile == "" {
		// Without it Go would verify client certificates against the
		// system roots, which trusts any public CA's customer.
		return nil, nil, fmt.Errorf("server TLS: client auth %q needs a client CA file", clientAuth)
	}
	r, err := newReloader(certFile, keyFile, clientCAFile)
	if err != nil {
		return nil, nil, fmt.Errorf("server TLS: %w", err)
	}
	cfg := &tls.Config{
		MinVersion:     tls.VersionTLS12,
		ClientAuth:     policy,
		GetCertificate: r.GetCertificate,
	}
	if clientCAFile != "" {
		cfg.ClientCAs = r.pool
		cfg.GetConfigForClient = r.getConfigForClient
	}
	r.base = cfg
	return cfg, r, nil
}
