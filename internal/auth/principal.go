package auth

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
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

// ErrAmbiguousCN: the certificate's subject has more than one common name
// attribute, so "its CN" names no one in particular.
var ErrAmbiguousCN = errors.New("client certificate subject has more than one CN attribute")

// oidCommonName is the X.520 commonName attribute type, 2.5.4.3.
var oidCommonName = asn1.ObjectIdentifier{2, 5, 4, 3}

// CommonName is the subject common name of a verified client certificate,
// "" when it has none. A subject with several CN attributes (CN=alice,
// CN=admin) is refused with ErrAmbiguousCN rather than read as one of
// them: Go's parser keeps the last, other software the first, and Kafka's
// default principal builder the whole DN, so any pick would let a
// certificate holder choose which identity a cn: rule or principal_from:
// cn sees. The error names the full subject for the log.
func CommonName(cert *x509.Certificate) (string, error) {
	n := 0
	for _, atv := range cert.Subject.Names {
		if atv.Type.Equal(oidCommonName) {
			n++
		}
	}
	if n > 1 {
		return "", fmt.Errorf("certificate %q (serial %s): %w (%d)", SubjectDN(cert), cert.SerialNumber, ErrAmbiguousCN, n)
	}
	return cert.Subject.CommonName, nil
}

// SubjectDN is the certificate's whole subject as an RFC 2253 string, for
// logs. Unlike cert.Subject.String, which rebuilds the name from the one
// value kept per attribute type, it shows every attribute, so that
// CN=alice,CN=admin is not logged as CN=admin.
func SubjectDN(cert *x509.Certificate) string {
	var rdns pkix.RDNSequence
	if rest, err := asn1.Unmarshal(cert.RawSubject, &rdns); err != nil || len(rest) > 0 {
		return cert.Subject.String()
	}
	return rdns.String()
}

// PrincipalFromCert names the client of a verified TLS certificate by rule:
// the subject common name (see CommonName: a subject with several is an
// ErrAmbiguousCN error), or the first DNS name, e-mail address or URI of
// the subject alternative names. It does not verify the certificate; the
// TLS handshake has.
func PrincipalFromCert(cert *x509.Certificate, rule string) (string, error) {
	if cert == nil {
		return "", fmt.Errorf("principal by %s: %w: no certificate", rule, ErrNoPrincipal)
	}
	var first string
	switch rule {
	case PrincipalCN:
		cn, err := CommonName(cert)
		if err != nil {
			return "", fmt.Errorf("principal by %s: %w", rule, err)
		}
		first = cn
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
		return "", fmt.Errorf("principal by %s from certificate %q (serial %s): %w", rule, SubjectDN(cert), cert.SerialNumber, ErrNoPrincipal)
	}
	return first, nil
}
