package engine

import (
	"crypto/tls"
	"fmt"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/tlsconfig"
)

// sniTLS builds the SNI listener's TLS configuration: listeners.sni.tls
// (its client-certificate policy, and the key pair served to names nothing
// else covers) plus the key pairs of listeners.sni.certificates, each
// served to the names its certificate covers. Every pair is reloaded from
// disk as listeners.tls is (tlsconfig.Reloader).
func (s *Server) sniTLS(c *config.SNIListener) (*tls.Config, error) {
	t := c.TLS
	base, reloader, err := tlsconfig.ServerConfig(t.CertFile, t.KeyFile, t.ClientAuth, t.ClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("listeners.sni.tls: %w", err)
	}
	s.watchCertificate(reloader, "listeners.sni.tls")
	if len(c.Certificates) == 0 {
		return base, nil
	}
	pairs := make([]func(*tls.ClientHelloInfo) (*tls.Certificate, error), 0, len(c.Certificates))
	for i, kp := range c.Certificates {
		cfg, r, err := tlsconfig.ServerConfig(kp.CertFile, kp.KeyFile, tlsconfig.ClientAuthNone, "")
		if err != nil {
			return nil, fmt.Errorf("listeners.sni.certificates[%d]: %w", i, err)
		}
		s.watchCertificate(r, fmt.Sprintf("listeners.sni.certificates[%d]", i))
		pairs = append(pairs, cfg.GetCertificate)
	}
	fallback := base.GetCertificate
	// Set before the config serves; the reloader's per-client copies are
	// cloned from base, so they select the same way.
	base.GetCertificate = func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		for _, get := range pairs {
			if cert, err := get(hello); err == nil && hello.SupportsCertificate(cert) == nil {
				return cert, nil
			}
		}
		return fallback(hello)
	}
	return base, nil
}
