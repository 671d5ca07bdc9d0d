package bench

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kproxy/kproxy/internal/testpki"
	"github.com/kproxy/kproxy/internal/tlsconfig"
)

// The names of kproxy-sni's listener; they resolve nowhere: the target's
// dialer sends every one to the SNI port.
const (
	sniDomain    = "kproxy-bench.test"
	sniBootstrap = "bootstrap." + sniDomain
	sniPattern   = "broker-$(node_id)." + sniDomain
)

// benchPKI is a throw-away CA, a server certificate for 127.0.0.1 and a
// wildcard one for the SNI names, written to the work directory for the
// TLS targets, and the client TLS configuration that trusts the CA.
type benchPKI struct {
	certFile, keyFile       string
	sniCertFile, sniKeyFile string
	client                  *tls.Config
}

func newBenchPKI(workDir string) (*benchPKI, error) {
	dir := filepath.Join(workDir, "pki")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := testpki.NewCA("kproxy-bench-ca")
	if err != nil {
		return nil, fmt.Errorf("bench CA: %w", err)
	}
	caFile, err := ca.WriteCA(dir, "ca")
	if err != nil {
		return nil, fmt.Errorf("bench CA: %w", err)
	}
	p := &benchPKI{}
	if p.certFile, p.keyFile, err = ca.WriteLeaf(dir, "server", testpki.ServerLeaf()); err != nil {
		return nil, fmt.Errorf("bench certificates: %w", err)
	}
	if p.sniCertFile, p.sniKeyFile, err = ca.WriteLeaf(dir, "sni", testpki.Leaf{
		CommonName: "*." + sniDomain, DNSNames: []string{"*." + sniDomain}, Server: true,
	}); err != nil {
		return nil, fmt.Errorf("bench SNI certificate: %w", err)
	}
	if p.client, err = tlsconfig.ClientConfig(caFile, "", "", "", false); err != nil {
		return nil, fmt.Errorf("bench client TLS: %w", err)
	}
	return p, nil
}
