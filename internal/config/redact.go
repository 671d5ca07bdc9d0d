package config

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
	if u := c.Upstream.SASL; u != nil {
		cp := *u
		if cp.Password != "" {
			cp.Password = RedactedValue
		}
		if cp.ClientSecret != "" {
			cp.ClientSecret = RedactedValue
		}
		r.Upstream.SASL = &cp
	}
	if l := c.Listeners.SASL; l != nil {
		cp := *l
		cp.Users = make([]SASLUser, len(l.Users))
		for i, u := range l.Users {
			creds := make([]string, len(u.Credentials))
			for j := range creds {
				creds[j] = RedactedValue
			}
			cp.Users[i] = SASLUser{Name: u.Name, Credentials: creds}
		}
		r.Listeners.SASL = &cp
	}
	return &r
}
