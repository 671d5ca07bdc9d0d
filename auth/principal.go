package auth

import (
	"crypto/x509"
	"errors"
	"fmt"
)

// Principal rules for PrincipalFromCert, as written in the configuration.
const (
	PrincipalCN       = "cn"
	PrincipalSANDNS   = "san:dns"
	PrincipalSANEmail = "san:email"
	PrincipalSANURI   = "san:uri"
)

// PrincipalRules lists the rules PrincipalFromCert accepts.
func PrincipalRules() []string {
	return []string{PrincipalCN, PrincipalSANDNS, PrincipalSANEmail, PrincipalSANURI}
}

// ErrNoPrincipal: the certificate has nothing the rule can take.
var ErrNoPrincipal = errors.New("no principal in client certificate")

// PrincipalFromCert names the client of a verified TLS certificate by rule:
// the subject common name, or the first DNS name, e-mail address or URI of
// the subject alternative names. It does not verify the certificate; the
// TLS handshake has.
func PrincipalFromCert(cert *x509.Certificate, rule string) (string, error) {
	if cert == nil {
		return "", fmt.Errorf("principal by %s: %w: no certificate", rule, ErrNoPrincipal)
	}
	var first string
	switch rule {
	case PrincipalCN:
		first = cert.Subject.CommonName
	case PrincipalSANDNS:
		if len(cert.DNSNames) > 0 {
			first = cert.DNSNames[0]
		}
	case PrincipalSANEmail:
		if len(cert.EmailAddresses) > 0 {
			first = cert.EmailAddresses[0]
		}
	case PrincipalSANURI:
		if len(cert.URIs) > 0 && cert.URIs[0] != nil {
			first = cert.URIs[0].String()
		}
	default:
		return "", fmt.Errorf("principal rule %q: want one of cn, san:dns, san:email, san:uri", rule)
	}
	if first == "" {
		return "", fmt.Errorf("principal by %s from certificate %q (serial %s): %w", rule, cert.Subject.String(), cert.SerialNumber, ErrNoPrincipal)
	}
	return first, nil
}
