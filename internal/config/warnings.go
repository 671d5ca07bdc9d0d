package config

import "github.com/kproxy/kproxy/internal/tlsconfig"

// PolicyWarnings lists what is valid in the file but likely not what the
// operator meant, each naming its key: the policy's grants to principals a
// client chooses (policyconfig.Policy.Warnings), and the listeners'
// settings that let in more than an operator may mean
// (listenerWarnings). kproxy validate prints them and kproxy run logs
// them at start.
func (c *Config) PolicyWarnings() []string {
	if len(c.VirtualClusters) > 0 {
		return c.virtualClusterWarnings()
	}
	return append(c.listenerWarnings(), c.servedPolicyWarnings()...)
}

// listenerWarnings are the listeners' settings that let in more than an
// operator may mean: an OAUTHBEARER listener without an audience accepts
// any token of its issuer, also one issued for another application.
func (c *Config) listenerWarnings() []string {
	sa := c.Listeners.SASL
	if sa == nil || sa.OAuthBearer == nil || sa.OAuthBearer.Audience != "" {
		return nil
	}
	return []string{"listeners.sasl.oauthbearer.audience is not set: any token of this issuer is accepted, also one issued for another application"}
}

// servedPolicyWarnings are the policy's warnings on one engine's
// configuration: whether its listeners authenticate decides what a
// client_id: principal may be granted.
func (c *Config) servedPolicyWarnings() []string {
	authenticated := c.Listeners.SASL != nil || (c.Listeners.TLS != nil && c.Listeners.TLS.ClientAuth == tlsconfig.ClientAuthRequire)
	return c.Policy.Warnings(authenticated)
}
