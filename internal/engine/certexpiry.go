package engine

import (
	"crypto/tls"
	"time"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/tlsconfig"
)

// watchCertificate follows the listener certificate r keeps, named by its
// configuration key: it logs each pair loaded and each one that failed to
// load, and keeps the certificate's expiry series current, so an
// operator sees which certificate serves and alerts see when it expires.
func (s *Server) watchCertificate(r *tlsconfig.Reloader, key string) {
	r.OnError(func(err error) {
		s.log.Error().Err(err).Str("key", key).Msg("listener certificate changed on disk but could not be loaded; keeping the previous one")
	})
	r.OnLoad(func(previous, current *tls.Certificate) { s.certificateLoaded(key, previous, current) })
	s.certificateLoaded(key, nil, r.Certificate())
}

// certificateLoaded logs the certificate now served for key and moves its
// expiry series from previous's serial (nil: none) to current's, keeping
// one series per listener certificate.
func (s *Server) certificateLoaded(key string, previous, current *tls.Certificate) {
	leaf := current.Leaf
	serial := leaf.SerialNumber.Text(16)
	if previous != nil {
		if old := previous.Leaf.SerialNumber.Text(16); old != serial {
			s.metrics.certExpiry.DeleteLabelValues(key, old)
		}
	}
	s.metrics.certExpiry.WithLabelValues(key, serial).Set(float64(leaf.NotAfter.Unix()))
	verb := "listener certificate loaded"
	if previous != nil {
		verb = "listener certificate reloaded"
	}
	s.log.Info().Str("certificate", key).Str("serial", serial).Str("subject", auth.SubjectDN(leaf)).
		Time("not_after", leaf.NotAfter.UTC()).Str("expires_in", time.Until(leaf.NotAfter).Round(time.Minute).String()).Msg(verb)
}
