package config

import (
	"fmt"
	"net/netip"

	"github.com/kproxy/kproxy/policy/policyconfig"
)

// PROXY protocol modes (listeners.proxy_protocol.mode).
const (
	ProxyProtocolOff      = "off"
	ProxyProtocolOptional = "optional"
	ProxyProtocolRequired = "required"
)

// ProxyProtocol says whether client connections start with a PROXY
// protocol header (v1 or v2) from a load balancer, and which peers may
// send one. The header's source address then stands for the client
// everywhere: policy cidr: principals, per-address limits, logs, audit.
type ProxyProtocol struct {
	// Mode is off (no header is read), optional (a header is read when a
	// trusted peer sends one) or required (a connection without a valid
	// header from a trusted peer is closed).
	Mode string `yaml:"mode"`
	// TrustedCIDRs are the networks (or single addresses) of the load
	// balancers allowed to send a header; a header from any other peer
	// closes the connection. Required unless Mode is off.
	TrustedCIDRs []string `yaml:"trusted_cidrs"`
}

// Enabled reports whether headers are read at all.
func (p ProxyProtocol) Enabled() bool { return p.Mode != "" && p.Mode != ProxyProtocolOff }

// TrustedPrefixes is TrustedCIDRs parsed; entries that do not parse
// (rejected by Validate) are left out.
func (p ProxyProtocol) TrustedPrefixes() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(p.TrustedCIDRs))
	for _, s := range p.TrustedCIDRs {
		if prefix, err := policyconfig.ParseNetwork(s); err == nil {
			out = append(out, prefix)
		}
	}
	return out
}

func (p ProxyProtocol) validate(bad func(key, format string, args ...any)) {
	const key = "listeners.proxy_protocol"
	switch p.Mode {
	case "", ProxyProtocolOff:
		if len(p.TrustedCIDRs) > 0 {
			bad(key+".trusted_cidrs", "set, but %s.mode is off: set mode to optional or required, or remove trusted_cidrs", key)
		}
		return
	case ProxyProtocolOptional, ProxyProtocolRequired:
	default:
		bad(key+".mode", "%q: must be off, optional or required", p.Mode)
		return
	}
	if len(p.TrustedCIDRs) == 0 {
		bad(key+".trusted_cidrs", "required when %s.mode is %s: list the load balancers' networks (10.0.0.0/8) or addresses", key, p.Mode)
	}
	for i, s := range p.TrustedCIDRs {
		if _, err := policyconfig.ParseNetwork(s); err != nil {
			bad(fmt.Sprintf("%s.trusted_cidrs[%d]", key, i), "%v", err)
		}
	}
}
