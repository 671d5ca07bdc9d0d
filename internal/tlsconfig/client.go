package tlsconfig

import (
	"crypto/tls"
	"fmt"
)

// ClientConfig returns the TLS configuration for connections to the
// upstream. caFile is a PEM bundle of the CAs to trust; empty means the
// system roots. serverName is the name to verify; empty means the caller
// sets it per connection (tls.Dial takes it from the address), which is
// what a proxy dialling many brokers wants. certFile and keyFile, both or
// neither, are a client certificate for mutual TLS; it is read once.
// insecureSkipVerify disables verification of the upstream's certificate,
// for tests only.
func ClientConfig(caFile, serverName, certFile, keyFile string, insecureSkipVerify bool) (*tls.Config, error) {
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         serverName,
		InsecureSkipVerify: insecureSkipVerify, //nolint:gosec // opt-in, documented as for tests
	}
	if caFile != "" {
		pool, err := LoadCertPool(caFile)
		if err != nil {
			return nil, fmt.Errorf("client TLS: %w", err)
		}
		cfg.RootCAs = pool
	}
	switch {
	case certFile != "" && keyFile != "":
		pair, err := loadKeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("client TLS: %w", err)
		}
		cfg.Certificates = []tls.Certificate{*pair}
	case certFile != "" || keyFile != "":
		return nil, fmt.Errorf("client TLS: a client certificate needs both the certificate file and the key file")
	}
	return cfg, nil
}
