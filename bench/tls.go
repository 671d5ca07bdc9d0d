package bench

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kproxy/kproxy/internal/testpki"
	"github.com/kproxy/kproxy/internal/tlsconfig"
)

// benchPKI is a throw-away CA and a server certificate for 127.0.0.1,
// written to the work directory for the TLS targets, and the client TLS
// configuration that trusts it.
type benchPKI struct {
	certFile, keyFile string
	client            *tls.Config
}

func newBenchPKI(workDir string) (*benchPKI, error) {
	dir := filepath.Join(workDir, "pki")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, cert, key, _, _, err := testpki.WriteTestPKI(dir)
	if err != nil {
		return nil, fmt.Errorf("bench certificates: %w", err)
	}
	client, err := tlsconfig.ClientConfig(ca, "", "", "", false)
	if err != nil {
		return nil, fmt.Errorf("bench client TLS: %w", err)
	}
	return &benchPKI{certFile: cert, keyFile: key, client: client}, nil
}
