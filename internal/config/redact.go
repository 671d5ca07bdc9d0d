package config

import (
	"github.com/kproxy/kproxy/policy/policyconfig"
	"gopkg.in/yaml.v3"
)

// RedactedValue replaces secret values in Redacted's copy.
const RedactedValue = "[redacted]"

// Redacted returns a copy of c that is safe to print, log or serve: the
// upstream SASL password or OAuth client secret and the listener users' salted SCRAM credentials
// (secret-equivalent: they allow an offline guessing attack) are replaced
// with RedactedValue. Where a secret comes from (password_file,
// password_env, client_secret_file, client_secret_env) is kept: it names a file or variable, not the value.
//
// Sections without secrets are shared with c, not copied: do not modify
// the result.
func (c *Config) Redacted() *Config {
	if c == nil {
		return nil
	}
	r := *c
	r.Unclaimed = policyNode(c.Policy)
	r.Upstream.SASL = c.Upstream.SASL.redacted()
	r.Listeners.SASL = c.Listeners.SASL.redacted()
	if len(c.VirtualClusters) > 0 {
		r.VirtualClusters = make([]VirtualCluster, len(c.VirtualClusters))
		for i, vc := range c.VirtualClusters {
			vc.Unclaimed = policyNode(vc.Policy)
			if vc.Upstream != nil {
				u := *vc.Upstream
				u.SASL = u.SASL.redacted()
				vc.Upstream = &u
			}
			if vc.Listeners != nil {
				l := *vc.Listeners
				l.SASL = l.SASL.redacted()
				vc.Listeners = &l
			}
			r.VirtualClusters[i] = vc
		}
	}
	return &r
}

// redacted is a copy of u with the password and the OAuth client secret
// replaced.
func (u *UpstreamSASL) redacted() *UpstreamSASL {
	if u == nil {
		return nil
	}
	cp := *u
	if cp.Password != "" {
		cp.Password = RedactedValue
	}
	if cp.ClientSecret != "" {
		cp.ClientSecret = RedactedValue
	}
	return &cp
}

// redacted is a copy of l with every credential replaced.
func (l *ListenerSASL) redacted() *ListenerSASL {
	if l == nil {
		return nil
	}
	cp := *l
	cp.Users = make([]SASLUser, len(l.Users))
	for i, u := range l.Users {
		creds := make([]string, len(u.Credentials))
		for j := range creds {
			creds[j] = RedactedValue
		}
		cp.Users[i] = SASLUser{Name: u.Name, Credentials: creds}
	}
	return &cp
}

// policyNode is p as the file writes it, under its key, for printing: the
// policy is a filter's section, which the Config type leaves to its
// factory (yaml:"-"), so it is written with the sections no core key has.
func policyNode(p *policyconfig.Policy) map[string]yaml.Node {
	if p == nil {
		return nil
	}
	var n yaml.Node
	if err := n.Encode(p); err != nil {
		return nil // a struct of plain fields always encodes
	}
	return map[string]yaml.Node{policySection: n}
}
