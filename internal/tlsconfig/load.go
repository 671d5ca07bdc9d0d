package tlsconfig

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"time"
)

// loadKeyPair reads a PEM certificate chain and its private key. Errors
// name the files; the key's content never appears in them.
func loadKeyPair(certFile, keyFile string) (*tls.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load key pair %s / %s: %w", certFile, keyFile, err)
	}
	if pair.Leaf == nil {
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("load key pair %s: %w", certFile, err)
		}
	}
	if time.Now().After(pair.Leaf.NotAfter) {
		return nil, fmt.Errorf("load key pair %s: certificate expired at %s", certFile, pair.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return &pair, nil
}

// LoadCertPool reads a PEM bundle of CA certificates; it must hold at
// least one. It is the one CA-bundle loader: listeners, the upstream
// client, the configuration's checks and the OAuth HTTPS clients use it.
func LoadCertPool(file string) (*x509.CertPool, error) {
	pemData, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("load CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemData) {
		return nil, fmt.Errorf("load CA file %s: no PEM certificate in it", file)
	}
	return pool, nil
}

// CheckKeyPair reads a certificate chain and its key as a listener or the
// upstream client would, and reports what is wrong with them (for
// `kproxy validate`, which starts nothing).
func CheckKeyPair(certFile, keyFile string) error {
	_, err := loadKeyPair(certFile, keyFile)
	return err
}
