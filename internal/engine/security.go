package engine

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/tlsconfig"
	"github.com/kproxy/kproxy/internal/upstreamclient"
)

// security is everything the listeners and dialers need to secure
// connections, built once at Start from the configuration.
type security struct {
	listenerTLS   *tls.Config
	principalFrom string
	// saslMode is "", config.SASLModeTerminate or config.SASLModePassthrough.
	saslMode string
	saslOpts auth.Options
	// jwks holds the OAUTHBEARER signing keys; nil unless enabled.
	jwks *auth.KeySet
	// upstreamTLS is the client configuration; ServerName is filled in per
	// dial unless configured.
	upstreamTLS  *tls.Config
	upstreamMech sasl.Mechanism
}

// terminatesSASL reports whether kproxy is its clients' SASL server
// (listeners.sasl.mode terminate).
func (sec *security) terminatesSASL() bool { return sec.saslMode == config.SASLModeTerminate }

func (s *Server) setupSecurity() error {
	cfg := s.cfg
	if t := cfg.Listeners.TLS; t != nil {
		tc, reloader, err := tlsconfig.ServerConfig(t.CertFile, t.KeyFile, t.ClientAuth, t.ClientCAFile)
		if err != nil {
			return fmt.Errorf("listeners.tls: %w", err)
		}
		s.watchCertificate(reloader, "listeners.tls")
		s.sec.listenerTLS, s.sec.principalFrom = tc, t.PrincipalFrom
	}
	if sa := cfg.Listeners.SASL; sa != nil {
		s.sec.saslMode = sa.Mode
		if sa.Mode == config.SASLModeTerminate {
			users := make([]auth.User, 0, len(sa.Users))
			for _, u := range sa.Users {
				users = append(users, auth.User{Name: u.Name, Credentials: u.Credentials})
			}
			store, err := auth.NewStore(users)
			if err != nil {
				return fmt.Errorf("listeners.sasl.users: %w", err)
			}
			s.sec.saslOpts = auth.Options{Mechanisms: sa.Mechanisms, Table: cfg.Mechanisms(), Store: store, SessionLifetime: sa.SessionLifetime}
			if o := sa.OAuthBearer; o != nil {
				if err := s.setupOAuthBearer(o); err != nil {
					return fmt.Errorf("listeners.sasl.oauthbearer: %w", err)
				}
			}
			if _, err := auth.NewAuthenticator(s.sec.saslOpts); err != nil {
				return fmt.Errorf("listeners.sasl: %w", err)
			}
		}
	}
	up, err := upstreamclient.NewSecurity(cfg.Upstream, s.observeToken)
	if err != nil {
		return err
	}
	if t := cfg.Upstream.TLS; t != nil && t.InsecureSkipVerify {
		s.log.Warn().Msg("upstream.tls.insecure_skip_verify is set: upstream certificates are NOT verified; anyone on the path can impersonate the cluster")
	}
	s.sec.upstreamTLS, s.sec.upstreamMech = up.TLS, up.SASL
	return nil
}

// handshakeTLS runs the client's TLS handshake within the handshake
// timeout with cfg and records what its certificate says about the
// principal, by the principal_from rule principalFrom.
func (p *pair) handshakeTLS(cfg *tls.Config, principalFrom string) error {
	tc := tls.Server(p.client, cfg)
	tc.SetDeadline(time.Now().Add(p.s.cfg.Limits.HandshakeTimeout))
	if p.draining.Load() { // drained before the handshake began: nothing to finish
		p.raw.SetDeadline(time.Now())
	}
	if err := tc.Handshake(); err != nil {
		p.s.metrics.tlsFailures.WithLabelValues("client").Inc()
		return fail(reasonTLS, fmt.Errorf("TLS handshake: %w", err))
	}
	tc.SetDeadline(time.Time{})
	p.client = tc
	if certs := tc.ConnectionState().PeerCertificates; len(certs) > 0 {
		return p.setCertPrincipal(certs[0], principalFrom)
	}
	return nil
}

// setCertPrincipal records what a verified certificate says about the
// client. A subject with several CN attributes is refused (the connection
// closes): both the cn: matcher and principal_from: cn would otherwise
// take whichever one the parser kept.
func (p *pair) setCertPrincipal(cert *x509.Certificate, rule string) error {
	cn, err := auth.CommonName(cert)
	if err != nil { // the close is logged with err, which names the subject
		return fail(reasonTLS, fmt.Errorf("client certificate refused: %w", err))
	}
	p.conn.CertCN = cn
	p.conn.CertSANs = append(append(append([]string(nil), cert.DNSNames...), cert.EmailAddresses...), urisOf(cert)...)
	if rule != "" {
		user, err := auth.PrincipalFromCert(cert, rule)
		if err != nil {
			p.logger().Warn().Err(err).Str("rule", rule).Str("subject", auth.SubjectDN(cert)).Msg("client certificate names no principal; connection stays anonymous")
			return nil
		}
		p.conn.User = user
		p.logger().Debug().Str("user", user).Str("subject", auth.SubjectDN(cert)).Msg("principal from client certificate")
	}
	return nil
}

func urisOf(cert *x509.Certificate) []string {
	out := make([]string, 0, len(cert.URIs))
	for _, u := range cert.URIs {
		out = append(out, u.String())
	}
	return out
}

// secureUpstream wraps a fresh upstream connection in TLS and authenticates
// it with kproxy's own credentials, as configured.
func (s *Server) secureUpstream(conn net.Conn, addr string, deadline time.Time) (net.Conn, error) {
	if s.sec.upstreamTLS != nil {
		tc := s.sec.upstreamTLS
		if tc.ServerName == "" {
			host, _, _ := net.SplitHostPort(addr)
			tc = tc.Clone()
			tc.ServerName = host
		}
		tlsConn := tls.Client(conn, tc)
		tlsConn.SetDeadline(deadline)
		if err := tlsConn.Handshake(); err != nil {
			s.metrics.tlsFailures.WithLabelValues("upstream").Inc()
			return nil, fmt.Errorf("upstream TLS handshake with %s: %w", addr, err)
		}
		tlsConn.SetDeadline(time.Time{})
		conn = tlsConn
	}
	return conn, nil
}
