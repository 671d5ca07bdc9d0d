// Package testpki makes throw-away certificate authorities and certificates
// for tests: an ECDSA P-256 CA, a server certificate for 127.0.0.1, ::1 and
// localhost, and a client certificate with a common name and one SAN of
// each kind. It is not a test file so that tests in any package (e2e
// included), and kproxy-bench's TLS targets, can use it; nothing that
// serves real clients should.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// The client certificate's identities, for tests of principal extraction.
const (
	ClientCN    = "kproxy-test-client"
	ClientDNS   = "client.kproxy.test"
	ClientEmail = "client@kproxy.test"
	ClientURI   = "spiffe://kproxy.test/client"
	ServerCN    = "kproxy-test-server"
)

// CA is a certificate authority that issues leaf certificates.
type CA struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte
}

// Leaf describes a certificate to issue.
type Leaf struct {
	CommonName     string
	DNSNames       []string
	IPAddresses    []net.IP
	EmailAddresses []string
	URIs           []*url.URL
	// ExtraNames are subject attributes added after CommonName, raw (an
	// attribute here replaces CommonName when it has its type): for
	// certificates with unusual subjects, such as two CN attributes.
	ExtraNames     []pkix.AttributeTypeAndValue
	Server, Client bool // extended key usages
	// NotAfter defaults to a day from now.
	NotAfter time.Time
}

// ServerLeaf is the server certificate WriteTestPKI issues.
func ServerLeaf() Leaf {
	return Leaf{
		CommonName:  ServerCN,
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		Server:      true,
	}
}

// ClientLeaf is the client certificate WriteTestPKI issues.
func ClientLeaf() Leaf {
	u, _ := url.Parse(ClientURI) // a constant that parses
	return Leaf{
		CommonName:     ClientCN,
		DNSNames:       []string{ClientDNS},
		EmailAddresses: []string{ClientEmail},
		URIs:           []*url.URL{u},
		Client:         true,
	}
}

// NewCA makes a self-signed CA valid for a day.
func NewCA(commonName string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	return &CA{Cert: cert, Key: key, CertPEM: pemBlock("CERTIFICATE", der)}, nil
}

// Issue makes a certificate and key for l, signed by ca, in PEM.
func (ca *CA) Issue(l Leaf) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("leaf key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	notAfter := l.NotAfter
	if notAfter.IsZero() {
		notAfter = time.Now().Add(24 * time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber:   serial,
		Subject:        pkix.Name{CommonName: l.CommonName, ExtraNames: l.ExtraNames},
		NotBefore:      time.Now().Add(-time.Hour),
		NotAfter:       notAfter,
		KeyUsage:       x509.KeyUsageDigitalSignature,
		DNSNames:       l.DNSNames,
		IPAddresses:    l.IPAddresses,
		EmailAddresses: l.EmailAddresses,
		URIs:           l.URIs,
	}
	if l.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if l.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("leaf certificate %q: %w", l.CommonName, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("leaf key %q: %w", l.CommonName, err)
	}
	return pemBlock("CERTIFICATE", der), pemBlock("PRIVATE KEY", keyDER), nil
}

// WriteLeaf issues l and writes it to dir/name.pem and dir/name-key.pem.
func (ca *CA) WriteLeaf(dir, name string, l Leaf) (certFile, keyFile string, err error) {
	certPEM, keyPEM, err := ca.Issue(l)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		return "", "", fmt.Errorf("write %s: %w", certFile, err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("write %s: %w", keyFile, err)
	}
	return certFile, keyFile, nil
}

// WriteCA writes the CA certificate to dir/name.pem.
func (ca *CA) WriteCA(dir, name string) (string, error) {
	f := filepath.Join(dir, name+".pem")
	if err := os.WriteFile(f, ca.CertPEM, 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", f, err)
	}
	return f, nil
}

// WriteTestPKI writes a new CA (ca.pem), a server certificate
// (server.pem, server-key.pem; see ServerLeaf) and a client certificate
// (client.pem, client-key.pem; see ClientLeaf) into dir and returns their
// paths.
func WriteTestPKI(dir string) (caFile, serverCert, serverKey, clientCert, clientKey string, err error) {
	ca, err := NewCA("kproxy-test-ca")
	if err != nil {
		return "", "", "", "", "", err
	}
	if caFile, err = ca.WriteCA(dir, "ca"); err != nil {
		return "", "", "", "", "", err
	}
	if serverCert, serverKey, err = ca.WriteLeaf(dir, "server", ServerLeaf()); err != nil {
		return "", "", "", "", "", err
	}
	if clientCert, clientKey, err = ca.WriteLeaf(dir, "client", ClientLeaf()); err != nil {
		return "", "", "", "", "", err
	}
	return caFile, serverCert, serverKey, clientCert, clientKey, nil
}

func newSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
