package engine

import (
	"context"
	"net"
	"net/url"
	"time"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/labels"
)

// maxUnknownKIDRefreshInterval caps how often an unknown kid refreshes
// the JWKS (it is never more often than jwks_refresh_interval either):
// rotations are picked up within seconds, and clients sending made-up kids
// cost the identity provider at most one request per interval.
const maxUnknownKIDRefreshInterval = 10 * time.Second

// setupOAuthBearer builds the OAUTHBEARER token validator and its key set,
// fetching the keys once (within jwks_timeout) so the first logins need
// not wait. A provider that cannot be reached at start is logged, not
// fatal: logins with tokens fail until a refresh succeeds.
func (s *Server) setupOAuthBearer(o *config.OAuthBearer) error {
	log := s.log.With().Str("jwks", o.JWKSURL+o.JWKSFile).Logger()
	keys, err := auth.NewKeySet(auth.JWKSOptions{
		OnFetch: func(n int, err error) {
			s.metrics.jwksKeys.Set(float64(n))
			if err != nil {
				s.metrics.jwksFetches.WithLabelValues(labels.Failure).Inc()
				log.Warn().Err(err).Int("keys", n).Msg("OAUTHBEARER signing keys fetch failed; keeping the keys held")
				return
			}
			s.metrics.jwksFetches.WithLabelValues(labels.Success).Inc()
			log.Debug().Int("keys", n).Msg("OAUTHBEARER signing keys fetched")
		},
		URL:                  o.JWKSURL,
		File:                 o.JWKSFile,
		CAFile:               o.JWKSCAFile,
		AllowedRedirectHosts: o.JWKSAllowedRedirectHosts,
		Timeout:              o.JWKSTimeout,
		RefreshInterval:      o.JWKSRefreshInterval,
		MinRefreshInterval:   min(o.JWKSRefreshInterval, maxUnknownKIDRefreshInterval),
	})
	if err != nil {
		return err
	}
	v, err := auth.NewJWTValidator(auth.JWTValidatorOptions{
		Keys:            keys,
		Issuer:          o.Issuer,
		Audience:        o.Audience,
		PrincipalClaim:  o.PrincipalClaim,
		PrincipalPrefix: o.PrincipalPrefix,
		ClockSkew:       o.ClockSkew,
		Algorithms:      o.AllowedAlgorithms,
		RequiredScopes:  o.RequiredScopes,
	})
	if err != nil {
		return err
	}
	if u, err := url.Parse(o.JWKSURL); err == nil && u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		log.Warn().Msg("listeners.sasl.oauthbearer.jwks_url is plain http: anyone on the path can substitute signing keys; use https")
	}
	if err := keys.Refresh(context.Background()); err != nil {
		log.Error().Msg("OAUTHBEARER signing keys not loaded at start; token logins fail until a refresh succeeds")
	} else {
		n, _, _ := keys.Status()
		log.Info().Int("keys", n).Msg("OAUTHBEARER signing keys loaded")
	}
	s.sec.jwks = keys
	s.sec.saslOpts.OAuthBearer = v
	return nil
}

// refreshJWKS refreshes the OAUTHBEARER keys on their schedule until ctx
// ends; failures are logged and counted by the key set's OnFetch, and the
// keys held stay in use.
func (s *Server) refreshJWKS(ctx context.Context) {
	if s.sec.jwks != nil {
		s.sec.jwks.Run(ctx)
	}
}

func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
