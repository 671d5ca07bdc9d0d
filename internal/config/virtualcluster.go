package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kproxy/kproxy/internal/encryption/encryptionconfig"
	"github.com/kproxy/kproxy/internal/largemessage/largemessageconfig"
	"github.com/kproxy/kproxy/internal/tlsconfig"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// VirtualCluster is one entry of virtual_clusters: a tenant served on its
// own listeners, seeing its own names. Upstream and Policy, when left out,
// are the top level's; of Listeners, bind_host, advertised_host, tls,
// sasl, proxy_protocol and port_per_broker are inherited from the top
// level's listeners when left out (the ports and sni never are).
type VirtualCluster struct {
	Name      string     `yaml:"name"`
	Listeners *Listeners `yaml:"listeners"`
	// TopicPrefix, GroupPrefix and TransactionalIDPrefix are added to the
	// tenant's names on the way upstream and removed on the way back; ""
	// leaves that kind of name unchanged.
	TopicPrefix           string `yaml:"topic_prefix"`
	GroupPrefix           string `yaml:"group_prefix"`
	TransactionalIDPrefix string `yaml:"transactional_id_prefix"`
	// ClusterID is the cluster id the tenant's clients are told; "" tells
	// them the upstream's.
	ClusterID string `yaml:"cluster_id"`
	// ClusterOperators are the principals (policy principal matchers)
	// allowed the APIs that act on the whole upstream cluster (SCRAM
	// credentials, client quotas, broker configs, ...); everyone else
	// gets the API's authorization error.
	ClusterOperators []string                   `yaml:"cluster_operators"`
	Upstream         *Upstream                  `yaml:"upstream"`
	Policy           *policyconfig.Policy       `yaml:"-" section:"policy"`         // as Config.Policy
	Encryption       *encryptionconfig.Config   `yaml:"-" section:"encryption"`     // as Config.Encryption
	LargeMessages    *largemessageconfig.Config `yaml:"-" section:"large_messages"` // as Config.LargeMessages
	// Filters are the filters' sections this virtual cluster sets itself;
	// Unclaimed holds them while loading (see Config).
	Filters   FilterSections       `yaml:"-"`
	Unclaimed map[string]yaml.Node `yaml:",inline"`
}

// Cluster is what one engine serves: the whole file when it has no
// virtual_clusters, else one virtual cluster with everything it inherits
// resolved.
type Cluster struct {
	// Name is the virtual cluster's name, "" for a file without
	// virtual_clusters (its metrics and log lines carry no label).
	Name string
	// Config is the top level with this cluster's listeners, upstream and
	// policy in place, and no virtual_clusters.
	Config *Config
	// Prefixes and cluster id as the virtual cluster sets them.
	TopicPrefix, GroupPrefix, TransactionalIDPrefix, ClusterID string
	// ClusterOperators as the virtual cluster sets them.
	ClusterOperators []string
}

// Clusters returns what kproxy serves: one Cluster per virtual cluster, in
// file order, or the file as the one cluster. It resolves inheritance at
// call time, so an upstream amended after loading (the embedded cluster's
// addresses) reaches every virtual cluster that inherits it.
func (c *Config) Clusters() []Cluster {
	if len(c.VirtualClusters) == 0 {
		return []Cluster{{Config: c}}
	}
	out := make([]Cluster, len(c.VirtualClusters))
	for i := range c.VirtualClusters {
		vc := &c.VirtualClusters[i]
		out[i] = Cluster{Name: vc.Name, Config: c.virtualConfig(vc), TopicPrefix: vc.TopicPrefix,
			GroupPrefix: vc.GroupPrefix, TransactionalIDPrefix: vc.TransactionalIDPrefix, ClusterID: vc.ClusterID,
			ClusterOperators: vc.ClusterOperators}
	}
	return out
}

// virtualConfig is c as vc's engine sees it.
func (c *Config) virtualConfig(vc *VirtualCluster) *Config {
	cp := *c
	cp.VirtualClusters = nil
	if vc.Listeners != nil {
		cp.Listeners = *vc.Listeners
	}
	if vc.Upstream != nil {
		cp.Upstream = *vc.Upstream
	}
	if vc.Policy != nil {
		cp.Policy = vc.Policy
	}
	cp.Filters = inheritSections(c.Filters, vc.Filters)
	return &cp
}

// inheritListeners fills the keys each virtual cluster's listeners leave
// out from the top level's, before defaults are applied to either.
func (c *Config) inheritListeners() {
	top := c.Listeners
	for i := range c.VirtualClusters {
		vc := &c.VirtualClusters[i]
		if vc.Listeners == nil {
			continue // reported by validation
		}
		l := vc.Listeners
		if l.BindHost == "" {
			l.BindHost = top.BindHost
		}
		if l.AdvertisedHost == "" {
			l.AdvertisedHost = top.AdvertisedHost
		}
		if l.TLS == nil {
			l.TLS = top.TLS
		}
		if l.SASL == nil {
			l.SASL = top.SASL
		}
		if l.ProxyProtocol.Mode == "" && len(l.ProxyProtocol.TrustedCIDRs) == 0 {
			l.ProxyProtocol = top.ProxyProtocol
		}
		if l.PortPerBroker == nil {
			l.PortPerBroker = top.PortPerBroker
		}
	}
}

// applyVirtualDefaults defaults what each virtual cluster set itself; what
// it inherits was defaulted at the top level.
func (c *Config) applyVirtualDefaults() {
	for i := range c.VirtualClusters {
		vc := &c.VirtualClusters[i]
		if vc.Listeners != nil {
			vc.Listeners.applyDefaults()
		}
		if vc.Upstream != nil {
			vc.Upstream.applyDefaults()
		}
	}
}

// virtualClusterName is what a name may hold: it is a metric label value
// and a principal (VirtualCluster:NAME).
var virtualClusterName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// legalTopicPrefix holds only the characters Kafka allows in topic names.
var legalTopicPrefix = regexp.MustCompile(`^[A-Za-z0-9._-]*$`)

// maxTopicPrefix leaves a tenant room for names: Kafka's limit is 249.
const maxTopicPrefix = 200

// validateVirtualClusters checks virtual_clusters. topErrs are the top
// level's problems: a virtual cluster's problem that is only one it
// inherited is not reported twice.
func (c *Config) validateVirtualClusters(bad func(key, format string, args ...any), topErrs []error) []error {
	if len(c.VirtualClusters) == 0 {
		return nil
	}
	l := c.Listeners
	for key, set := range map[string]bool{
		"listeners.bootstrap_port": l.BootstrapPort != 0, "listeners.broker_port_base": l.BrokerPortBase != 0,
		"listeners.brokers": len(l.Brokers) > 0, "listeners.sni": l.SNI != nil,
	} {
		if set {
			bad(key, "not served when virtual_clusters is set: set it in each virtual cluster's listeners")
		}
	}
	inherited := map[string]bool{}
	for _, err := range topErrs {
		inherited[err.Error()] = true
	}
	var errs []error
	names := map[string]int{}
	ports := map[int]string{} // port → "virtual_clusters[i]" and the key that uses it
	for i := range c.VirtualClusters {
		vc := &c.VirtualClusters[i]
		at := fmt.Sprintf("virtual_clusters[%d]", i)
		vbad := func(key, format string, args ...any) { bad(at+"."+key, format, args...) }
		switch j, dup := names[vc.Name]; {
		case !virtualClusterName.MatchString(vc.Name):
			vbad("name", "%q: required, 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit", vc.Name)
		case dup:
			vbad("name", "%q already used by virtual_clusters[%d]", vc.Name, j)
		default:
			names[vc.Name] = i
		}
		if vc.Listeners == nil {
			vbad("listeners", "required: the ports (bootstrap_port, broker_port_base) or sni this virtual cluster is served on")
			continue
		}
		if vc.Upstream != nil && vc.Upstream.Embedded != nil {
			vbad("upstream.embedded", "not supported in a virtual cluster: set upstream.embedded at the top level, which virtual clusters inherit")
		}
		if !legalTopicPrefix.MatchString(vc.TopicPrefix) || len(vc.TopicPrefix) > maxTopicPrefix {
			vbad("topic_prefix", "%q: at most %d of the characters Kafka allows in topic names (letters, digits, '.', '_', '-')", vc.TopicPrefix, maxTopicPrefix)
		}
		if vc.ClusterID != "" && (len(vc.ClusterID) > 64 || strings.ContainsFunc(vc.ClusterID, func(r rune) bool { return r <= ' ' || r > '~' })) {
			vbad("cluster_id", "%q: at most 64 printable ASCII characters without spaces (Kafka's are 22-character base64 UUIDs)", vc.ClusterID)
		}
		for j, op := range vc.ClusterOperators {
			if _, err := policyconfig.ParsePrincipal(op); err != nil {
				vbad(fmt.Sprintf("cluster_operators[%d]", j), "%v", err)
			}
		}
		for _, p := range vc.Listeners.ports() {
			if owner, used := ports[p.port]; used {
				vbad("listeners."+p.key, "%d is already used by %s", p.port, owner)
				continue
			}
			ports[p.port] = at
			if p.key != "bootstrap_port" {
				ports[p.port] += " (listeners." + p.key + ")"
			}
		}
		// The engine's own checks, on the configuration this virtual
		// cluster's engine runs with, under this cluster's key names.
		for _, err := range c.virtualConfig(vc).validateServed() {
			if !inherited[err.Error()] {
				errs = append(errs, fmt.Errorf("%s.%w", at, err))
			}
		}
	}
	c.validatePrefixOverlap(bad)
	return errs
}

// namedPort is a port a listeners block binds, with its key.
type namedPort struct {
	key  string
	port int
}

// ports lists the fixed ports l binds (0, any free port, is left out).
// Broker ports other than broker_port_base itself (node 0) depend on the
// upstream's node ids, unknown at load.
func (l *Listeners) ports() []namedPort {
	var out []namedPort
	add := func(key string, p int) {
		if p > 0 {
			out = append(out, namedPort{key, p})
		}
	}
	if l.PortPerBrokerEnabled() {
		add("bootstrap_port", l.BootstrapPort)
		add("broker_port_base", l.BrokerPortBase)
		for i, b := range l.Brokers {
			add(fmt.Sprintf("brokers[%d].port", i), b.Port)
		}
	}
	if l.SNI != nil {
		add("sni.port", l.SNI.Port)
	}
	return out
}

// validatePrefixOverlap refuses two virtual clusters on one upstream whose
// prefixes of a kind overlap (one starts with the other, or either is
// empty): the one with the shorter prefix would see the other's names. It
// compares them as Kafka compares topic names for collisions, '.' and '_'
// being one character (unifyCollisionChars): prefixes "a.b." and "a_b."
// would let one tenant find out, and take, names the other has, by
// creating the colliding name. Group and transactional-id prefixes are
// compared the same way, so that no pair of prefixes can ever be told
// apart by that rule alone.
func (c *Config) validatePrefixOverlap(bad func(key, format string, args ...any)) {
	kinds := []struct {
		key    string
		prefix func(*VirtualCluster) string
	}{
		{"topic_prefix", func(v *VirtualCluster) string { return v.TopicPrefix }},
		{"group_prefix", func(v *VirtualCluster) string { return v.GroupPrefix }},
		{"transactional_id_prefix", func(v *VirtualCluster) string { return v.TransactionalIDPrefix }},
	}
	vcs := c.VirtualClusters
	for i := range vcs {
		for j := range i {
			if !c.sameUpstream(&vcs[i], &vcs[j]) {
				continue
			}
			for _, k := range kinds {
				a, b := k.prefix(&vcs[i]), k.prefix(&vcs[j])
				switch {
				case strings.HasPrefix(a, b) || strings.HasPrefix(b, a):
					bad(fmt.Sprintf("virtual_clusters[%d].%s", i, k.key),
						"%q overlaps virtual_clusters[%d].%s %q on the same upstream: one tenant would see the other's names; give each a distinct prefix neither starts with the other",
						a, j, k.key, b)
				case prefixesCollide(a, b):
					bad(fmt.Sprintf("virtual_clusters[%d].%s", i, k.key),
						"%q collides with virtual_clusters[%d].%s %q on the same upstream: Kafka treats '.' and '_' as the same character when it checks a new topic name for collisions, so one tenant could probe for and squat on the other's names; give each a prefix that differs in a letter or digit",
						a, j, k.key, b)
				}
			}
		}
	}
}

// prefixesCollide reports whether a name under prefix a and one under b
// can collide by Kafka's rule: after unifying '.' and '_', one prefix
// starts with the other.
func prefixesCollide(a, b string) bool {
	ua, ub := unifyCollisionChars(a), unifyCollisionChars(b)
	return strings.HasPrefix(ua, ub) || strings.HasPrefix(ub, ua)
}

// unifyCollisionChars is Kafka's Topic.unifyCollisionChars: '.' as '_'.
func unifyCollisionChars(name string) string { return strings.ReplaceAll(name, ".", "_") }

// sameUpstream reports whether a and b may reach one cluster: both inherit
// the top level's upstream, or they share a bootstrap server.
func (c *Config) sameUpstream(a, b *VirtualCluster) bool {
	ua, ub := c.Upstream, c.Upstream
	if a.Upstream != nil {
		ua = *a.Upstream
	}
	if b.Upstream != nil {
		ub = *b.Upstream
	}
	if ua.Embedded != nil || ub.Embedded != nil {
		return true
	}
	for _, s := range ua.BootstrapServers {
		if slices.Contains(ub.BootstrapServers, s) {
			return true
		}
	}
	return false
}

// virtualClusterWarnings are each virtual cluster's policy warnings, under
// its key, and the ways one tenant could become another: a virtual
// cluster whose listeners authenticate nobody, or two that accept the same
// users (as both do when they inherit the top level's listeners.sasl).
func (c *Config) virtualClusterWarnings() []string {
	var out []string
	owner := map[string]int{} // a user name → the first virtual cluster accepting it
	for i := range c.VirtualClusters {
		vc := &c.VirtualClusters[i]
		if vc.Listeners == nil {
			continue
		}
		at := fmt.Sprintf("virtual_clusters[%d]", i)
		served := c.virtualConfig(vc)
		for _, w := range append(served.listenerWarnings(), served.servedPolicyWarnings()...) {
			out = append(out, at+"."+w)
		}
		for j, op := range vc.ClusterOperators {
			if pm, err := policyconfig.ParsePrincipal(op); err == nil && (pm.Kind == policyconfig.PrincipalAny || pm.Kind == policyconfig.PrincipalClientID) {
				out = append(out, fmt.Sprintf("%s.cluster_operators[%d]: %q is a principal any client can claim: it would let anyone change the whole cluster's SCRAM users, quotas and broker configs; name User: or cn: principals", at, j, op))
			}
		}
		if len(c.VirtualClusters) < 2 {
			continue
		}
		l := vc.Listeners
		sasl := l.SASL != nil && l.SASL.Mode == SASLModeTerminate
		if l.SASL == nil && (l.TLS == nil || l.TLS.ClientAuth != tlsconfig.ClientAuthRequire) {
			out = append(out, fmt.Sprintf("%s.listeners: no sasl and no tls.client_auth: require: anyone who reaches its ports is a client of %s", at, vc.Name))
		}
		if !sasl {
			continue
		}
		for _, u := range l.SASL.Users {
			if j, ok := owner[u.Name]; ok && j != i {
				out = append(out, fmt.Sprintf("%s.listeners.sasl: user %q can also log in to virtual_clusters[%d] (%s): give each virtual cluster users of its own",
					at, u.Name, j, c.VirtualClusters[j].Name))
				continue
			}
			owner[u.Name] = i
		}
	}
	return out
}
