package testkit

import (
	"fmt"
	"strings"
	"time"
)

// Config builds the configuration file of a test kproxy in front of
// Upstream: listeners on 127.0.0.1 with OS-chosen ports and warnings
// logged, the sections most tests share; Extra adds the test's own.
type Config struct {
	// Upstream is upstream.bootstrap_servers.
	Upstream []string
	// DialTimeout is upstream.dial_timeout; zero means 5s.
	DialTimeout time.Duration
	// UpstreamKeys are further keys of the upstream section, in flow
	// style: "metadata_refresh: 200ms".
	UpstreamKeys string
	// ListenerKeys are further keys of the listeners section, in flow
	// style: "tls: {cert_file: a.pem, key_file: a.key}".
	ListenerKeys string
	// Admin serves the admin endpoint on 127.0.0.1 with an OS-chosen port.
	Admin bool
	// Log is the log section, in flow style; "" means "{level: warn}".
	Log string
	// Extra is further top-level sections (policy, limits...), as YAML.
	Extra string
}

// YAML is the configuration file's text.
func (c Config) YAML() string {
	dial := c.DialTimeout
	if dial == 0 {
		dial = 5 * time.Second
	}
	quoted := make([]string, len(c.Upstream))
	for i, addr := range c.Upstream {
		quoted[i] = fmt.Sprintf("%q", addr)
	}
	var b strings.Builder
	upstreamKeys := ""
	if c.UpstreamKeys != "" {
		upstreamKeys = ", " + c.UpstreamKeys
	}
	fmt.Fprintf(&b, "upstream: {bootstrap_servers: [%s], dial_timeout: %s%s}\n", strings.Join(quoted, ", "), dial, upstreamKeys)
	listenerKeys := ""
	if c.ListenerKeys != "" {
		listenerKeys = ", " + c.ListenerKeys
	}
	fmt.Fprintf(&b, "listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0%s}\n", listenerKeys)
	if c.Admin {
		b.WriteString("admin: {listen: \"127.0.0.1:0\"}\n")
	}
	log := c.Log
	if log == "" {
		log = "{level: warn}"
	}
	fmt.Fprintf(&b, "log: %s\n", log)
	b.WriteString(c.Extra)
	return b.String()
}

// TerminateOAuthBearer is Config.ListenerKeys for listeners terminating
// OAUTHBEARER, validating tokens of issuer for the audience kafka against
// the keys at jwksURL; keys are further keys of the oauthbearer section,
// in flow style: "required_scopes: [kafka]".
func TerminateOAuthBearer(jwksURL, issuer string, keys ...string) string {
	more := ""
	for _, k := range keys {
		more += ", " + k
	}
	return fmt.Sprintf("sasl: {mode: terminate, mechanisms: [OAUTHBEARER], oauthbearer: {jwks_url: %q, issuer: %q, audience: kafka%s}}", jwksURL, issuer, more)
}
