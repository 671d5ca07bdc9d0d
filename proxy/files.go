package proxy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/tlsconfig"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// checkFiles reads every file and secret the configuration names (key
// pairs, CA bundles, passwords and client secrets, a JWKS file) as Run
// reads them at start, and returns what is wrong with each, naming its
// key: so that `kproxy validate` finds a missing Secret key before a pod
// does. A problem a virtual cluster inherits from the top level is
// reported once, under the first virtual cluster that has it.
func checkFiles(cfg *config.Config) error {
	var errs []error
	seen := map[string]bool{}
	for i, cl := range cfg.Clusters() {
		prefix := ""
		if cl.Name != "" {
			prefix = fmt.Sprintf("virtual_clusters[%d].", i)
		}
		report := func(key string, err error) {
			if err == nil || seen[key+"\x00"+err.Error()] {
				return
			}
			seen[key+"\x00"+err.Error()] = true
			errs = append(errs, fmt.Errorf("%s%s: %w", prefix, key, err))
		}
		checkClusterFiles(cl.Config, report)
	}
	if a := cfg.Audit; a != nil && a.Output != "" && a.Output != policyconfig.AuditStdout {
		if err := appendable(a.Output); err != nil {
			errs = append(errs, fmt.Errorf("audit.output: %w", err))
		}
	}
	return errors.Join(errs...)
}

// checkClusterFiles checks the files of one served configuration.
func checkClusterFiles(c *config.Config, report func(key string, err error)) {
	l, u := c.Listeners, c.Upstream
	if t := l.TLS; t != nil {
		checkListenerTLS("listeners.tls.", t, report)
	}
	if s := l.SNI; s != nil {
		if s.TLS != nil {
			checkListenerTLS("listeners.sni.tls.", s.TLS, report)
		}
		for j, kp := range s.Certificates {
			report(fmt.Sprintf("listeners.sni.certificates[%d]", j), tlsconfig.CheckKeyPair(kp.CertFile, kp.KeyFile))
		}
	}
	if sa := l.SASL; sa != nil && sa.OAuthBearer != nil {
		if o := sa.OAuthBearer; o.JWKSFile != "" {
			report("listeners.sasl.oauthbearer.jwks_file", readable(o.JWKSFile))
		}
		// A wrong bundle would otherwise show only when the identity
		// provider is first asked, as failed logins.
		if o := sa.OAuthBearer; o.JWKSCAFile != "" {
			report("listeners.sasl.oauthbearer.jwks_ca_file", caBundle(o.JWKSCAFile))
		}
	}
	if t := u.TLS; t != nil {
		if t.CAFile != "" {
			_, err := tlsconfig.LoadCertPool(t.CAFile)
			report("upstream.tls.ca_file", err)
		}
		if t.CertFile != "" {
			report("upstream.tls.cert_file", tlsconfig.CheckKeyPair(t.CertFile, t.KeyFile))
		}
	}
	if s := u.SASL; s != nil {
		switch m, _ := s.Entry(); m.Login {
		case auth.LoginOAuth:
			_, err := auth.ResolveSecret(s.ClientSecret, s.ClientSecretFile, s.ClientSecretEnv)
			report("upstream.sasl.client_secret", err)
			if s.TokenEndpointCAFile != "" {
				report("upstream.sasl.token_endpoint_ca_file", caBundle(s.TokenEndpointCAFile))
			}
		case auth.LoginPassword:
			_, err := auth.ResolveSecret(s.Password, s.PasswordFile, s.PasswordEnv)
			report("upstream.sasl.password", err)
		}
	}
}

// checkListenerTLS checks a listener's key pair and client CA bundle;
// keys are under at (such as "listeners.tls.").
func checkListenerTLS(at string, t *config.ListenerTLS, report func(key string, err error)) {
	report(at+"cert_file", tlsconfig.CheckKeyPair(t.CertFile, t.KeyFile))
	if t.ClientCAFile != "" {
		_, err := tlsconfig.LoadCertPool(t.ClientCAFile)
		report(at+"client_ca_file", err)
	}
}

// appendable reports whether file could be opened for appending, as run
// opens audit.output, without creating it: an existing file must open for
// writing, a new one needs its directory. (Whether the directory is
// writable is left to run, which says so.)
func appendable(file string) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		return f.Close()
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if st, serr := os.Stat(filepath.Dir(file)); serr != nil || !st.IsDir() {
		return err // its directory is missing: the open's error says which file
	}
	return nil
}

// readable reports whether file can be opened for reading.
func readable(file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	return f.Close()
}

// caBundle loads a PEM bundle of CA certificates to trust.
func caBundle(file string) error {
	if _, err := tlsconfig.LoadCertPool(file); err != nil {
		return fmt.Errorf("%w; want a readable PEM file of the CA certificates to trust", err)
	}
	return nil
}
