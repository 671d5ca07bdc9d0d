package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// Validate checks every key and reports all problems at once, each naming
// the offending key and what would be valid.
func (c *Config) Validate() error { return c.validate(nil) }

// validate is Validate naming, next to each key an Override set, the
// source it came from (sources maps keys to sources), and reporting with
// the file's other problems those of the filters' sections (found, as
// their factories validated them while loading).
func (c *Config) validate(sources map[string]string, found ...error) error {
	errs := found
	named := func(key string) string {
		if src, ok := sources[key]; ok {
			return fmt.Sprintf("%s (set by %s)", key, src)
		}
		return key
	}
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", named(key), fmt.Sprintf(format, args...)))
	}

	errs = append(errs, c.validateSections(named)...)
	vcErrs := c.validateVirtualClusters(bad, errs)
	errs = append(errs, vcErrs...)
	c.Tracing.validate(bad)

	if c.Admin.Listen != "" {
		if _, _, err := splitHostPort(c.Admin.Listen); err != nil {
			bad("admin.listen", "%q is not host:port (%v)", c.Admin.Listen, err)
		}
	}
	switch c.Log.Level {
	case "trace", "debug", "info", "warn", "error":
	default:
		bad("log.level", "%q: must be one of trace, debug, info, warn, error", c.Log.Level)
	}
	switch c.Log.Format {
	case "json", "console":
	default:
		bad("log.format", "%q: must be json or console", c.Log.Format)
	}
	if c.Log.Sample < 0 {
		bad("log.sample", "%s: must be a positive duration such as 10s", c.Log.Sample)
	}
	if pl := c.Metrics.PrincipalLimit; pl < 0 || pl > MaxPrincipalLimit {
		bad("metrics.principal_limit", "%d: must be 0 (no principal label) to %d", pl, MaxPrincipalLimit)
	}

	lim := c.Limits
	if lim.MaxFrameBytes < 1024 {
		bad("limits.max_frame_bytes", "%d: must be at least 1024", lim.MaxFrameBytes)
	}
	if lim.MaxBufferedBytes < int64(lim.MaxFrameBytes) {
		bad("limits.max_buffered_bytes", "%d: must be at least limits.max_frame_bytes (%d), so that any frame a client may send fits",
			lim.MaxBufferedBytes, lim.MaxFrameBytes)
	}
	notNegative(bad, "limits.idle_timeout", lim.IdleTimeout)
	if lim.MaxInFlight < 1 {
		bad("limits.max_in_flight", "%d: must be at least 1", lim.MaxInFlight)
	}
	notNegative(bad, "limits.shutdown_timeout", lim.ShutdownTimeout)
	return errors.Join(errs...)
}

// validateSections checks what one engine serves: the upstream, the
// listeners, the policy and the security sections. named names a key as
// validate does.
func (c *Config) validateSections(named func(string) string) []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", named(key), fmt.Sprintf(format, args...)))
	}
	u := c.Upstream
	switch {
	case len(u.BootstrapServers) == 0 && u.Embedded == nil:
		bad("upstream", "set upstream.bootstrap_servers (host:port list) or upstream.embedded")
	case len(u.BootstrapServers) > 0 && u.Embedded != nil:
		bad("upstream", "bootstrap_servers and embedded are exclusive; set one")
	}
	for i, s := range u.BootstrapServers {
		if _, _, err := splitHostPort(s); err != nil {
			bad(fmt.Sprintf("upstream.bootstrap_servers[%d]", i), "%q is not host:port (%v)", s, err)
		}
	}
	if e := u.Embedded; e != nil && (e.Brokers < 1 || e.Brokers > 16) {
		bad("upstream.embedded.brokers", "%d: must be between 1 and 16", e.Brokers)
	}
	if e := u.Embedded; e != nil && e.DefaultPartitions < 1 {
		bad("upstream.embedded.default_partitions", "%d: must be at least 1", e.DefaultPartitions)
	}
	notNegative(bad, "upstream.dial_timeout", u.DialTimeout)
	notNegative(bad, "upstream.metadata_refresh", u.MetadataRefresh)
	notNegative(bad, "upstream.reconnect_backoff", u.ReconnectBackoff)
	if u.ReconnectBackoffMax < u.ReconnectBackoff {
		bad("upstream.reconnect_backoff_max", "%s: must be at least upstream.reconnect_backoff (%s)", u.ReconnectBackoffMax, u.ReconnectBackoff)
	}

	l := c.Listeners
	if l.PortPerBrokerEnabled() && isWildcard(l.BindHost) && l.AdvertisedHost == "" {
		bad("listeners.advertised_host", "required when %s is %s: clients must be told a host they can reach", named("listeners.bind_host"), l.BindHost)
	}
	checkPort := func(key string, p int) {
		if p < 0 || p > 65535 {
			bad(key, "%d: must be a TCP port (0-65535; 0 picks a free one)", p)
		}
	}
	checkPort("listeners.bootstrap_port", l.BootstrapPort)
	checkPort("listeners.broker_port_base", l.BrokerPortBase)
	seen := map[int32]bool{}
	for i, b := range l.Brokers {
		key := fmt.Sprintf("listeners.brokers[%d]", i)
		if b.NodeID < 0 {
			bad(key+".node_id", "%d: must be a node id (>= 0)", b.NodeID)
		}
		if seen[b.NodeID] {
			bad(key+".node_id", "%d: listed twice", b.NodeID)
		}
		seen[b.NodeID] = true
		checkPort(key+".port", b.Port)
	}

	l.ProxyProtocol.validate(bad)
	if l.SNI != nil {
		l.SNI.validate(bad)
	} else if !l.PortPerBrokerEnabled() && len(c.VirtualClusters) == 0 {
		bad("listeners.port_per_broker", "false leaves no listener: set listeners.sni too")
	}
	// The policy is checked as it is decoded, as every filter's section is
	// (sections.go).
	validateSection(policyconfig.AuditSection(), c.Audit, bad)
	return append(errs, c.security().validate()...)
}

// validateServed is validateSections with the keys as written.
func (c *Config) validateServed() []error {
	return c.validateSections(func(key string) string { return key })
}

// validateSection runs the checks factory f declares on a section the
// core decoded (cfg nil: not set), naming each key as written at the top
// level.
func validateSection[C any](f filter.Factory[C], cfg *C, bad func(key, format string, args ...any)) {
	if cfg == nil || f.Validate == nil {
		return
	}
	var problems filter.Problems
	f.Validate(cfg, &problems)
	for _, p := range problems.List() {
		key := f.Section
		if p.Key != "" {
			key += "." + p.Key
		}
		bad(key, "%s", p.Message)
	}
}

// notNegative reports the duration d of key when it is negative.
func notNegative(bad func(key, format string, args ...any), key string, d time.Duration) {
	if d < 0 {
		bad(key, "%s: must be positive", d)
	}
}

func splitHostPort(s string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q out of range", portStr)
	}
	return host, port, nil
}
