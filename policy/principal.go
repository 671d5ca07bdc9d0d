package policy

import (
	"net/netip"
	"slices"
	"strconv"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/quota"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// Anonymous is the user of a connection that has not authenticated, as
// Kafka names it.
const Anonymous = "ANONYMOUS"

// Principal is who sent a request: the attributes rules match on.
type Principal struct {
	// User is the authenticated user, Anonymous until SASL or mTLS says
	// otherwise.
	User string
	// ClientID is the client.id of the request's header.
	ClientID string
	// Addr is the client's IP address.
	Addr netip.Addr
	// Listener is the kproxy listener the connection came in on.
	Listener string
	// CN is the common name of a verified client certificate, if any.
	CN string
	// Claims are the client's OAUTHBEARER token claims (filter.Conn.Claims).
	Claims map[string][]string
	// VirtualCluster is the virtual cluster the connection came in on, ""
	// without virtual_clusters.
	VirtualCluster string
}

// principalOf returns the principal of a request on conn.
func principalOf(conn *filter.Conn) Principal {
	p := Principal{
		User:           conn.User,
		ClientID:       conn.ClientID,
		Addr:           conn.Client.Addr().Unmap(),
		Listener:       conn.Listener,
		CN:             conn.CertCN,
		Claims:         conn.Claims,
		VirtualCluster: conn.VirtualCluster,
	}
	if p.User == "" {
		p.User = Anonymous
	}
	return p
}

// String is the principal as Kafka writes it, "User:NAME".
func (p Principal) String() string { return "User:" + p.User }

// principalMatcher is one compiled entry of a rule's principals.
type principalMatcher struct {
	kind   string
	m      matcher
	prefix netip.Prefix
	claim  string
}

func compilePrincipals(list []string) ([]principalMatcher, error) {
	out := make([]principalMatcher, 0, len(list))
	for _, s := range list {
		pm, err := policyconfig.ParsePrincipal(s)
		if err != nil {
			return nil, err
		}
		out = append(out, principalMatcher{kind: pm.Kind, m: compileMatcher(pm.Pattern, s), prefix: pm.Prefix, claim: pm.Claim})
	}
	return out, nil
}

func (pm *principalMatcher) match(p *Principal) bool {
	switch pm.kind {
	case policyconfig.PrincipalAny:
		return true
	case policyconfig.PrincipalUser:
		return pm.m.match(p.User)
	case policyconfig.PrincipalClientID:
		return pm.m.match(p.ClientID)
	case policyconfig.PrincipalCIDR:
		return p.Addr.IsValid() && pm.prefix.Contains(p.Addr)
	case policyconfig.PrincipalCN:
		return p.CN != "" && pm.m.match(p.CN)
	case policyconfig.PrincipalListener:
		return pm.m.match(p.Listener)
	case policyconfig.PrincipalClaim:
		return slices.ContainsFunc(p.Claims[pm.claim], pm.m.match)
	case policyconfig.PrincipalVirtualCluster:
		return p.VirtualCluster != "" && pm.m.match(p.VirtualCluster)
	}
	return false
}

// anyPrincipal reports whether any matcher in list matches p; an empty list
// matches everyone (governance scopes default to all principals).
func anyPrincipal(list []principalMatcher, p *Principal) bool {
	if len(list) == 0 {
		return true
	}
	for i := range list {
		if list[i].match(p) {
			return true
		}
	}
	return false
}

// subjectKey is a Principal as a map key for the cache of Subjects: its
// claims reduced to those the engine's rules match on (a token's jti, iat
// or exp must not make every login a new entry), canonically encoded.
type subjectKey struct {
	user, clientID, listener, cn, virtualCluster string
	addr                                         netip.Addr
	claims                                       string
}

func (e *ruleEngine) subjectKey(p *Principal) subjectKey {
	k := subjectKey{user: p.User, clientID: p.ClientID, listener: p.Listener, cn: p.CN, virtualCluster: p.VirtualCluster, addr: p.Addr}
	if len(e.claimNames) == 0 || len(p.Claims) == 0 {
		return k
	}
	var b []byte
	for _, name := range e.claimNames {
		values, ok := p.Claims[name]
		if !ok {
			continue
		}
		b = strconv.AppendQuote(b, name)
		for _, v := range values {
			b = append(b, ' ')
			b = strconv.AppendQuote(b, v)
		}
		b = append(b, ';')
	}
	k.claims = string(b)
	return k
}

// ConnMatcher compiles principals (policyconfig.ParsePrincipal syntax) into a
// test of a connection's principal at the time of the call, matching as
// policy rules match; an empty list matches no connection.
func ConnMatcher(list []string) (func(*filter.Conn) bool, error) {
	compiled, err := compilePrincipals(list)
	if err != nil {
		return nil, err
	}
	return func(c *filter.Conn) bool {
		p := principalOf(c)
		return len(compiled) > 0 && anyPrincipal(compiled, &p)
	}, nil
}

// QuotaMatcher compiles a quota rule's principals (quota.CompileMatcher):
// quotas match principals exactly as policy rules do.
func QuotaMatcher(list []string) (quota.Matcher, error) {
	compiled, err := compilePrincipals(list)
	return quotaMatcher(compiled), err
}

type quotaMatcher []principalMatcher

func (m quotaMatcher) Match(q *quota.Principal) bool {
	p := Principal{User: q.User, ClientID: q.ClientID, Addr: q.Addr, Listener: q.Listener, CN: q.CN,
		VirtualCluster: q.VirtualCluster, Claims: q.Claims}
	return len(m) > 0 && anyPrincipal(m, &p)
}

func (m quotaMatcher) NamesClientIDs() bool {
	for _, pm := range m {
		if pm.kind == policyconfig.PrincipalClientID {
			return true
		}
	}
	return false
}
