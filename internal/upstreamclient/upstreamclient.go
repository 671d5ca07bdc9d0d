// Package upstreamclient builds what kproxy needs to talk to the cluster
// as itself: the TLS and SASL settings of upstream.tls and upstream.sasl,
// shared by the connections kproxy relays and by the requests kproxy
// sends on its own behalf (start-up discovery, topic id resolution).
package upstreamclient

import (
	"crypto/tls"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/tlsconfig"
)

// Security is kproxy's own upstream identity: TLS client settings (nil:
// plaintext; ServerName empty means the dialled host) and SASL mechanism
// (nil: none). With OAUTHBEARER, OAuth is the token source SASL logs in
// with (nil otherwise).
type Security struct {
	TLS   *tls.Config
	SASL  sasl.Mechanism
	OAuth *auth.TokenSource
}

// NewSecurity reads upstream.tls and upstream.sasl, including the
// password or OAuth client secret from its file or environment variable.
// observe, if not nil, is told of every OAuth token request.
func NewSecurity(u config.Upstream, observe func(auth.TokenEvent)) (Security, error) {
	var sec Security
	if t := u.TLS; t != nil {
		tc, err := tlsconfig.ClientConfig(t.CAFile, t.ServerName, t.CertFile, t.KeyFile, t.InsecureSkipVerify)
		if err != nil {
			return Security{}, fmt.Errorf("upstream.tls: %w", err)
		}
		sec.TLS = tc
	}
	if s := u.SASL; s != nil {
		mech, oauth, err := login(s, observe)
		if err != nil {
			return Security{}, err
		}
		sec.SASL, sec.OAuth = mech, oauth
	}
	return sec, nil
}

// login is the client side of upstream.sasl's mechanism, as its table
// entry says kproxy logs in with it, and the token source of an OAuth
// login.
func login(s *config.UpstreamSASL, observe func(auth.TokenEvent)) (sasl.Mechanism, *auth.TokenSource, error) {
	entry, _ := s.Entry()
	switch entry.Login {
	case auth.LoginOAuth:
		secret, err := auth.ResolveSecret(s.ClientSecret, s.ClientSecretFile, s.ClientSecretEnv)
		if err != nil {
			return nil, nil, fmt.Errorf("upstream.sasl.client_secret: %w", err)
		}
		scopes, err := auth.ParseScope(s.Scope)
		if err != nil {
			return nil, nil, fmt.Errorf("upstream.sasl.scope: %w", err)
		}
		ts, err := auth.NewTokenSource(auth.ClientCredentials{
			TokenURL: s.TokenEndpoint, ClientID: s.ClientID, ClientSecret: secret,
			Scopes: scopes, Timeout: s.TokenTimeout, CAFile: s.TokenEndpointCAFile, Observe: observe,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("upstream.sasl: %w", err)
		}
		return ts.Mechanism(), ts, nil
	case auth.LoginProgram:
		mech, err := entry.ProgramLogin()
		if err != nil {
			return nil, nil, fmt.Errorf("upstream.sasl.mechanism: %w", err)
		}
		return mech, nil, nil
	}
	password, err := auth.ResolveSecret(s.Password, s.PasswordFile, s.PasswordEnv)
	if err != nil {
		return nil, nil, fmt.Errorf("upstream.sasl.password: %w", err)
	}
	mech, err := auth.UpstreamMechanism(s.Mechanism, s.Username, password)
	if err != nil {
		return nil, nil, fmt.Errorf("upstream.sasl: %w", err)
	}
	return mech, nil, nil
}

// ClientOpts are the franz-go options of a client that reaches the
// cluster at bootstrap the way kproxy's relayed connections do.
func (s Security) ClientOpts(bootstrap []string, dialTimeout time.Duration) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(bootstrap...),
		kgo.DialTimeout(dialTimeout),
		kgo.RequestRetries(0),
	}
	if s.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(s.TLS.Clone()))
	}
	if s.SASL != nil {
		opts = append(opts, kgo.SASL(s.SASL))
	}
	return opts
}

// New returns a franz-go client for kproxy's own requests to the cluster
// of u (bootstrap servers resolved: the embedded cluster's addresses set).
// It connects on first use; Close it when done.
func New(u config.Upstream, extra ...kgo.Opt) (*kgo.Client, error) {
	sec, err := NewSecurity(u, nil)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(sec.ClientOpts(u.BootstrapServers, u.DialTimeout), extra...)...)
	if err != nil {
		return nil, fmt.Errorf("upstream client: %w", err)
	}
	return cl, nil
}
