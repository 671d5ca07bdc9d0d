package auth

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/testpki"
)

func issue(t *testing.T, l testpki.Leaf) *x509.Certificate {
	t.Helper()
	ca, err := testpki.NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, _, err := ca.Issue(l)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func TestPrincipalFromCert(t *testing.T) {
	client := issue(t, testpki.ClientLeaf())
	for rule, want := range map[string]string{
		PrincipalCN:       testpki.ClientCN,
		PrincipalSANDNS:   testpki.ClientDNS,
		PrincipalSANEmail: testpki.ClientEmail,
		PrincipalSANURI:   testpki.ClientURI,
	} {
		got, err := PrincipalFromCert(client, rule)
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", rule, got, err, want)
		}
	}
	// First match wins.
	two := testpki.ClientLeaf()
	two.DNSNames = []string{"first.test", "second.test"}
	if got, _ := PrincipalFromCert(issue(t, two), PrincipalSANDNS); got != "first.test" {
		t.Errorf("san:dns with two names: %q", got)
	}
	bare := issue(t, testpki.Leaf{Client: true})
	for _, rule := range PrincipalRules() {
		if _, err := PrincipalFromCert(bare, rule); !errors.Is(err, ErrNoPrincipal) {
			t.Errorf("%s on a certificate without names: %v", rule, err)
		}
	}
	if _, err := PrincipalFromCert(client, "ou"); err == nil {
		t.Error("unknown rule accepted")
	}
	if _, err := PrincipalFromCert(nil, PrincipalCN); !errors.Is(err, ErrNoPrincipal) {
		t.Errorf("nil certificate: %v", err)
	}
}

// A subject with two CN attributes (CN=alice and CN=admin): Go's parser
// makes CommonName the last one, admin. kproxy refuses the certificate
// for the cn rule and for CommonName (the cn: matcher), and the error
// shows the whole subject; the SAN rules are not affected.
func TestPrincipalFromCertTwoCNs(t *testing.T) {
	l := testpki.ClientLeaf()
	l.ExtraNames = []pkix.AttributeTypeAndValue{{Type: oidCommonName, Value: "alice"}, {Type: oidCommonName, Value: "admin"}}
	cert := issue(t, l)
	if cert.Subject.CommonName != "admin" {
		t.Fatalf("test certificate: Go reads CN %q, want the last one, admin", cert.Subject.CommonName)
	}
	got, err := PrincipalFromCert(cert, PrincipalCN)
	if !errors.Is(err, ErrAmbiguousCN) || got != "" {
		t.Fatalf("cn rule: %q, %v; want ErrAmbiguousCN", got, err)
	}
	if !strings.Contains(err.Error(), "CN=alice") || !strings.Contains(err.Error(), "CN=admin") {
		t.Errorf("error %q does not show the whole subject", err)
	}
	if cn, err := CommonName(cert); !errors.Is(err, ErrAmbiguousCN) || cn != "" {
		t.Fatalf("CommonName: %q, %v; want ErrAmbiguousCN", cn, err)
	}
	if got, err := PrincipalFromCert(cert, PrincipalSANDNS); err != nil || got != testpki.ClientDNS {
		t.Errorf("san:dns: %q, %v", got, err)
	}
	// One CN, whether set as CommonName or as a raw attribute, is fine.
	one := testpki.Leaf{Client: true, ExtraNames: []pkix.AttributeTypeAndValue{{Type: oidCommonName, Value: "alice"}}}
	if cn, err := CommonName(issue(t, one)); err != nil || cn != "alice" {
		t.Errorf("one raw CN: %q, %v", cn, err)
	}
}
