package policyconfig

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// Pattern is a parsed resource or name pattern: a glob where "*" matches
// any run of characters and "?" any one character, or, written
// "re:EXPR", a Go regular expression (unanchored: write ^ and $).
type Pattern struct {
	Glob   string
	Regexp *regexp.Regexp
}

// ParsePattern parses a pattern as written in a rule.
func ParsePattern(s string) (Pattern, error) {
	if s == "" {
		return Pattern{}, fmt.Errorf("empty pattern")
	}
	if expr, ok := strings.CutPrefix(s, "re:"); ok {
		re, err := regexp.Compile(expr)
		if err != nil {
			return Pattern{}, fmt.Errorf("%q is not a regular expression: %v", expr, err)
		}
		return Pattern{Regexp: re}, nil
	}
	return Pattern{Glob: s}, nil
}

// Principal matcher kinds.
const (
	PrincipalAny      = "*"
	PrincipalUser     = "User"
	PrincipalClientID = "client_id"
	PrincipalCIDR     = "cidr"
	PrincipalCN       = "cn"
	PrincipalListener = "listener"
	// PrincipalClaim matches a claim of the client's OAUTHBEARER token:
	// Claim:NAME=PATTERN (the kind in any case, e.g. claim:groups=payments).
	PrincipalClaim = "claim"
	// PrincipalVirtualCluster matches the virtual cluster a connection
	// came in on (virtual_clusters[].name); virtual_cluster is accepted
	// too, in the spelling of client_id.
	PrincipalVirtualCluster = "VirtualCluster"
)

// PrincipalMatcher is a parsed principal matcher.
type PrincipalMatcher struct {
	Kind string // one of the Principal* constants
	// Pattern applies to the user, client id, certificate CN or listener.
	Pattern Pattern
	// Prefix is the network of a cidr matcher.
	Prefix netip.Prefix
	// Claim is the claim name of a claim matcher, whose Pattern applies to
	// each of the claim's values.
	Claim string
}

// ParsePrincipal parses a principal matcher as written in a rule.
func ParsePrincipal(s string) (PrincipalMatcher, error) {
	if s == "*" {
		return PrincipalMatcher{Kind: PrincipalAny}, nil
	}
	kind, value, ok := strings.Cut(s, ":")
	if !ok || value == "" {
		return PrincipalMatcher{}, fmt.Errorf("%q is not a principal matcher; write User:NAME, client_id:ID, cidr:NET, cn:NAME, listener:NAME, VirtualCluster:NAME, Claim:NAME=VALUE or *", s)
	}
	if strings.EqualFold(kind, PrincipalClaim) {
		return parseClaimPrincipal(s, value)
	}
	if kind == "virtual_cluster" {
		kind = PrincipalVirtualCluster
	}
	switch kind {
	case PrincipalUser, PrincipalClientID, PrincipalCN, PrincipalListener, PrincipalVirtualCluster:
		p, err := ParsePattern(value)
		if err != nil {
			return PrincipalMatcher{}, fmt.Errorf("%q: %w", s, err)
		}
		return PrincipalMatcher{Kind: kind, Pattern: p}, nil
	case PrincipalCIDR:
		prefix, err := ParseNetwork(value)
		if err != nil {
			return PrincipalMatcher{}, fmt.Errorf("%q: %w", s, err)
		}
		return PrincipalMatcher{Kind: PrincipalCIDR, Prefix: prefix}, nil
	}
	return PrincipalMatcher{}, fmt.Errorf("%q: unknown principal kind %q; valid: User, client_id, cidr, cn, listener, VirtualCluster, Claim, or * alone", s, kind)
}

// parseClaimPrincipal parses the NAME=PATTERN of a Claim: matcher.
func parseClaimPrincipal(s, value string) (PrincipalMatcher, error) {
	name, pattern, ok := strings.Cut(value, "=")
	if !ok || name == "" || pattern == "" {
		return PrincipalMatcher{}, fmt.Errorf("%q: a claim matcher is Claim:NAME=VALUE (VALUE a pattern, e.g. Claim:groups=payments)", s)
	}
	p, err := ParsePattern(pattern)
	if err != nil {
		return PrincipalMatcher{}, fmt.Errorf("%q: %w", s, err)
	}
	return PrincipalMatcher{Kind: PrincipalClaim, Claim: name, Pattern: p}, nil
}

// ParseNetwork reads a network (10.1.0.0/16) or a single address
// (10.1.2.3, meaning 10.1.2.3/32), as cidr: principals are written; the
// configuration reads every list of networks with it. IPv4-mapped IPv6
// forms are unmapped, as client addresses are.
func ParseNetwork(s string) (netip.Prefix, error) {
	prefix, err := netip.ParsePrefix(s)
	if err != nil {
		addr, aerr := netip.ParseAddr(s)
		if aerr != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not a network (10.1.0.0/16) or address", s)
		}
		addr = addr.Unmap()
		prefix = netip.PrefixFrom(addr, addr.BitLen())
	}
	return prefix.Masked(), nil
}
