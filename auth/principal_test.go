package auth

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
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
