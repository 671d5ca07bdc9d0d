package config

import (
	"fmt"
	"math/big"
	"net/netip"
	"regexp"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/acl"
	"github.com/kproxy/kproxy/internal/tlsconfig"
)

// Policy is kproxy's authorization and governance policy (docs/policy.md).
// It is the one section of the file that is applied again, without a
// restart, when the file changes or kproxy gets SIGHUP.
type Policy struct {
	// Mode is "enforce" (the default) or "audit": log what would be denied
	// and forward everything unchanged.
	Mode string `yaml:"mode"`
	// Default is the decision when no rule allows or denies: "deny" (the
	// default, as Kafka's authorizer without allow.everyone.if.no.acl.found)
	// or "allow".
	Default string `yaml:"default"`
	// Rules grant or deny operations on resources to principals. A deny
	// that matches wins over any allow.
	Rules []Rule `yaml:"rules"`
	// Governance constrains what allowed requests may do.
	Governance []Governance `yaml:"governance"`
	// BrokerDefaults declares the upstream's topic defaults, which a
	// topic created without an explicit partition count or replication
	// factor (CreateTopics with -1, or auto-creation) gets. Without it,
	// such a topic fails every topic_changes bound on what kproxy cannot
	// know.
	BrokerDefaults *BrokerDefaults `yaml:"broker_defaults"`
	// Quotas are Kafka-style client quotas (config/quota.go, docs/quotas.md).
	Quotas []Quota `yaml:"quotas"`
	// QuotaWindows is how quota rates are measured (Kafka's defaults when
	// left out).
	QuotaWindows *QuotaWindows `yaml:"quota_windows"`
	// QuotaReplicas splits every quota across this many kproxy replicas:
	// each enforces quota/QuotaReplicas (default 1).
	QuotaReplicas int `yaml:"quota_replicas"`
	// QuotaAuditSampleRate is the share (0 to 1) of throttled requests
	// written to the audit log; default DefaultQuotaAuditSampleRate.
	QuotaAuditSampleRate *float64 `yaml:"quota_audit_sample_rate"`
}

// BrokerDefaults are the upstream brokers' num.partitions and
// default.replication.factor, as the operator declares them; 0: unknown.
type BrokerDefaults struct {
	NumPartitions            int32 `yaml:"num_partitions"`
	DefaultReplicationFactor int16 `yaml:"default_replication_factor"`
}

// Policy modes and defaults.
const (
	PolicyModeEnforce  = "enforce"
	PolicyModeAudit    = "audit"
	PolicyDefaultDeny  = "deny"
	PolicyDefaultAllow = "allow"
)

// Rule is one authorization rule: who (Principals) may or may not do what
// (Allow, Deny) to which resources (Topics, Groups, TransactionalIDs,
// Cluster).
type Rule struct {
	// Name identifies the rule in error messages and the audit log.
	Name string `yaml:"name"`
	// Principals: "User:NAME", "client_id:ID", "cidr:NET", "cn:NAME",
	// "listener:NAME" or "*". NAME and ID are patterns (see Pattern).
	Principals []string `yaml:"principals"`
	// Allow and Deny are Kafka ACL operations (see acl.ParseOperation).
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
	// Resource patterns the operations apply to.
	Topics           []string `yaml:"topics"`
	Groups           []string `yaml:"groups"`
	TransactionalIDs []string `yaml:"transactional_ids"`
	// Cluster makes the rule apply to the cluster resource.
	Cluster bool `yaml:"cluster"`
}

// Patterns is the rule's list of patterns for resources of type rt. The
// cluster has no patterns: Cluster says whether the rule names it.
func (r Rule) Patterns(rt acl.ResourceType) []string {
	switch rt {
	case acl.Topic:
		return r.Topics
	case acl.Group:
		return r.Groups
	case acl.TransactionalID:
		return r.TransactionalIDs
	}
	return nil
}

// Names reports whether the rule applies to resources of type rt.
func (r Rule) Names(rt acl.ResourceType) bool {
	if rt == acl.Cluster {
		return r.Cluster
	}
	return len(r.Patterns(rt)) > 0
}

// Governance is one named set of constraints on requests the rules
// allowed. It applies to connections whose principal matches Principals
// (all when empty) and, for produce and topic constraints, to topics
// matching Topics (all when empty).
type Governance struct {
	Name       string   `yaml:"name"`
	Principals []string `yaml:"principals"`
	Topics     []string `yaml:"topics"`
	// Produce constrains Produce requests.
	Produce *ProduceGovernance `yaml:"produce"`
	// TopicChanges constrains CreateTopics, CreatePartitions, AlterConfigs
	// and IncrementalAlterConfigs on topics.
	TopicChanges *TopicGovernance `yaml:"topic_changes"`
	// ClientIDPattern: a request whose client id does not match closes its
	// connection.
	ClientIDPattern string `yaml:"client_id_pattern"`
	// ForbiddenAPIs are Kafka API names (as kmsg spells them, e.g.
	// "DeleteRecords"; case-insensitive) answered with POLICY_VIOLATION.
	ForbiddenAPIs []string `yaml:"forbidden_apis"`
}

// ProduceGovernance constrains Produce requests.
type ProduceGovernance struct {
	// RequiredAcks is the least durable acks a producer may ask for: "all"
	// (or -1: only acks=all passes), 1 (acks=1 or all) or 0 (anything).
	RequiredAcks string `yaml:"required_acks"`
	// AllowedCompression lists codecs batches may use: none, gzip, snappy,
	// lz4, zstd. Empty allows all.
	AllowedCompression []string `yaml:"allowed_compression"`
	// MaxBatchBytes bounds each record batch's size on the wire; 0: no bound.
	MaxBatchBytes int `yaml:"max_batch_bytes"`
	// RequireIdempotence refuses batches without a producer id.
	RequireIdempotence bool `yaml:"require_idempotence"`
}

// TopicGovernance constrains topic creation and alteration.
type TopicGovernance struct {
	// NamePattern must match the name of every created topic.
	NamePattern string `yaml:"name_pattern"`
	// MaxPartitions bounds a topic's partition count (CreateTopics and the
	// new total in CreatePartitions); 0: no bound.
	MaxPartitions int32 `yaml:"max_partitions"`
	// Replication factor bounds for CreateTopics; 0: no bound.
	MinReplicationFactor int16 `yaml:"min_replication_factor"`
	MaxReplicationFactor int16 `yaml:"max_replication_factor"`
	// RequiredConfigs are "KEY OP VALUE" requirements, OP one of
	// = != < <= > >= (numeric when both sides are numbers), e.g.
	// "min.insync.replicas >= 2". The key must be set, and satisfy OP.
	RequiredConfigs []string `yaml:"required_configs"`
	// ForbiddenConfigs are config key patterns that may not be set.
	ForbiddenConfigs []string `yaml:"forbidden_configs"`
}

// Audit configures the policy audit log.
type Audit struct {
	// Output is "stdout" (the default) or a file path, appended to.
	Output string `yaml:"output"`
	// LogAllowed logs every decision, not only denials.
	LogAllowed bool `yaml:"log_allowed"`
	// BufferSize is how many lines may wait for the writer before new ones
	// are dropped (and counted); the data path never waits. Default 8192.
	BufferSize int `yaml:"buffer_size"`
}

// DefaultAuditBufferSize is Audit.BufferSize when left out.
const DefaultAuditBufferSize = 8192

// AuditStdout is the Audit.Output value for standard output.
const AuditStdout = "stdout"

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
		prefix, err := parseNetwork(value)
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

// ConfigRequirement is a parsed required_configs entry.
type ConfigRequirement struct {
	Key, Op, Value string
	// Number is Value read as a number (KafkaNumber), nil when Value is
	// not one: then only = and != apply, as string comparisons.
	Number *big.Rat
}

func (r ConfigRequirement) String() string { return r.Key + " " + r.Op + " " + r.Value }

// ParseConfigRequirement parses "KEY OP VALUE".
func ParseConfigRequirement(s string) (ConfigRequirement, error) {
	// Longest operators first, so ">=" is not read as ">".
	for _, op := range []string{">=", "<=", "!=", "=", ">", "<"} {
		key, value, ok := strings.Cut(s, op)
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if key == "" || value == "" || strings.ContainsAny(key, " <>=!") {
			break
		}
		n, isNumber := KafkaNumber(value)
		if op != "=" && op != "!=" && !isNumber {
			return ConfigRequirement{}, fmt.Errorf("%q: %s needs a decimal number (such as 2, -1, 0.5 or 1e6), not %q", s, op, value)
		}
		return ConfigRequirement{Key: key, Op: op, Value: value, Number: n}, nil
	}
	return ConfigRequirement{}, fmt.Errorf("%q is not KEY OP VALUE (OP one of = != < <= > >=), e.g. \"min.insync.replicas >= 2\"", s)
}

// plainDecimal is the number syntax on which Go and Java agree: an
// optional sign, digits with an optional fraction, an optional exponent.
var plainDecimal = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,2})?$`)

// maxNumberLen bounds the numbers KafkaNumber reads: far above any
// config's range (a Java long has 19 digits), and small enough that exact
// arithmetic on them is cheap.
const maxNumberLen = 64

// KafkaNumber reads a config value as a number the way Kafka's ConfigDef
// would, or reports that it is not one. Kafka trims characters up to
// U+0020 (Java's String.trim) and then parses LONG and INT configs with
// Long/Integer.parseInt (sign and decimal digits) and DOUBLE configs with
// Double.parseDouble, which also takes hex, "NaN", "Infinity" and a d/f
// suffix. Only the syntax on which both languages agree is a number here:
// anything else, and exponents beyond two digits, is not, so a numeric
// requirement fails on it rather than compare a value the broker reads
// differently. The result is exact (no float rounding).
func KafkaNumber(s string) (*big.Rat, bool) {
	s = JavaTrim(s)
	if len(s) > maxNumberLen || !plainDecimal.MatchString(s) {
		return nil, false
	}
	n, ok := new(big.Rat).SetString(strings.TrimPrefix(s, "+"))
	return n, ok
}

// JavaTrim trims what Java's String.trim does: every character up to
// U+0020 at either end (control characters included, other Unicode
// spaces not), as Kafka does to config values before reading them.
func JavaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// Compression codec names, indexed by the codec number in a record batch's
// attributes.
func CompressionCodecs() []string { return []string{"none", "gzip", "snappy", "lz4", "zstd"} }

// ParseRequiredAcks returns the acks value a required_acks setting names.
func ParseRequiredAcks(s string) (int16, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "all", "-1":
		return -1, nil
	case "1":
		return 1, nil
	case "0":
		return 0, nil
	}
	return 0, fmt.Errorf("%q: must be all (or -1), 1 or 0", s)
}

// APIKeyByName returns the API key kmsg names s (case-insensitive).
func APIKeyByName(s string) (int16, bool) {
	for key := int16(0); key < 1000; key++ {
		if kmsg.RequestForKey(key) != nil && strings.EqualFold(kmsg.NameForKey(key), s) {
			return key, true
		}
	}
	return 0, false
}

// validatePolicy checks the policy and audit sections.
func (c *Config) validatePolicy(bad func(key, format string, args ...any)) {
	if a := c.Audit; a != nil {
		if a.BufferSize < 0 {
			bad("audit.buffer_size", "%d: must be at least 1 (default %d)", a.BufferSize, DefaultAuditBufferSize)
		}
		if a.Output != "" && a.Output != AuditStdout && strings.TrimSpace(a.Output) != a.Output {
			bad("audit.output", "%q: stray spaces; write stdout or a file path", a.Output)
		}
	}
	p := c.Policy
	if p == nil {
		return
	}
	switch p.Mode {
	case "", PolicyModeEnforce, PolicyModeAudit:
	default:
		bad("policy.mode", "%q: must be enforce or audit", p.Mode)
	}
	switch p.Default {
	case "", PolicyDefaultDeny, PolicyDefaultAllow:
	default:
		bad("policy.default", "%q: must be deny or allow", p.Default)
	}
	names := map[string]string{}
	for i, r := range p.Rules {
		key := fmt.Sprintf("policy.rules[%d]", i)
		validateRuleName(bad, key, r.Name, names)
		validatePrincipals(bad, key, r.Principals, true)
		if len(r.Allow) == 0 && len(r.Deny) == 0 {
			bad(key, "rule %q has neither allow nor deny", r.Name)
		}
		kinds := ruleKinds(r)
		if len(kinds) == 0 {
			bad(key, "rule %q names no resource: set topics, groups, transactional_ids or cluster: true", r.Name)
		}
		seen := map[acl.Operation]string{}
		for _, list := range []struct {
			name string
			ops  []string
		}{{"allow", r.Allow}, {"deny", r.Deny}} {
			for j, s := range list.ops {
				opKey := fmt.Sprintf("%s.%s[%d]", key, list.name, j)
				op, ok := acl.ParseOperation(s)
				if !ok {
					bad(opKey, "%q is not an operation; valid: %s", s, strings.Join(acl.OperationNames(), ", "))
					continue
				}
				if other, dup := seen[op]; dup && other != list.name {
					bad(opKey, "%q is both allowed and denied in the same rule", s)
				}
				seen[op] = list.name
				if len(kinds) > 0 && !appliesToAny(op, r) {
					bad(opKey, "%q does not apply to %s; it applies to %s", s, strings.Join(kinds, " or "), strings.Join(resourceKeys(op.AppliesTo()), ", "))
				}
			}
		}
		for _, rt := range acl.ResourceTypes() {
			validatePatterns(bad, key+"."+rt.ConfigKey(), r.Patterns(rt))
		}
	}
	if d := p.BrokerDefaults; d != nil {
		if d.NumPartitions < 0 {
			bad("policy.broker_defaults.num_partitions", "%d: must be the upstream's num.partitions (at least 1), or 0 or left out when unknown", d.NumPartitions)
		}
		if d.DefaultReplicationFactor < 0 {
			bad("policy.broker_defaults.default_replication_factor", "%d: must be the upstream's default.replication.factor (at least 1), or 0 or left out when unknown", d.DefaultReplicationFactor)
		}
	}
	p.validateQuotas(bad)
	govNames := map[string]string{}
	for i, g := range p.Governance {
		key := fmt.Sprintf("policy.governance[%d]", i)
		validateRuleName(bad, key, g.Name, govNames)
		if other, dup := names[g.Name]; dup && g.Name != "" {
			bad(key+".name", "%q is also the name of %s: names must be unique across rules and governance", g.Name, other)
		}
		validatePrincipals(bad, key, g.Principals, false)
		validatePatterns(bad, key+".topics", g.Topics)
		if g.Produce == nil && g.TopicChanges == nil && g.ClientIDPattern == "" && len(g.ForbiddenAPIs) == 0 {
			bad(key, "governance %q constrains nothing: set produce, topic_changes, client_id_pattern or forbidden_apis", g.Name)
		}
		if pr := g.Produce; pr != nil {
			validateProduceGovernance(bad, key+".produce", pr)
		}
		if tc := g.TopicChanges; tc != nil {
			validateTopicGovernance(bad, key+".topic_changes", tc)
		}
		if g.ClientIDPattern != "" {
			if _, err := ParsePattern(g.ClientIDPattern); err != nil {
				bad(key+".client_id_pattern", "%v", err)
			}
		}
		for j, api := range g.ForbiddenAPIs {
			k, ok := APIKeyByName(api)
			switch {
			case !ok:
				bad(fmt.Sprintf("%s.forbidden_apis[%d]", key, j), "%q is not a Kafka API name (e.g. DeleteRecords, ElectLeaders)", api)
			case k == int16(kmsg.ApiVersions) || k == int16(kmsg.SASLHandshake) || k == int16(kmsg.SASLAuthenticate):
				bad(fmt.Sprintf("%s.forbidden_apis[%d]", key, j), "%q cannot be forbidden: clients need it to connect", api)
			}
		}
	}
}

func validateRuleName(bad func(string, string, ...any), key, name string, seen map[string]string) {
	switch {
	case name == "":
		bad(key+".name", "required: names appear in error messages and the audit log")
	case name == "default":
		bad(key+".name", "\"default\" is reserved for the default decision")
	case seen[name] != "":
		bad(key+".name", "%q is also the name of %s", name, seen[name])
	default:
		seen[name] = key
	}
}

func validatePrincipals(bad func(string, string, ...any), key string, principals []string, required bool) {
	if required && len(principals) == 0 {
		bad(key+".principals", "required: list principal matchers, or \"*\" for everyone")
	}
	for j, s := range principals {
		if _, err := ParsePrincipal(s); err != nil {
			bad(fmt.Sprintf("%s.principals[%d]", key, j), "%v", err)
		}
	}
}

func validatePatterns(bad func(string, string, ...any), key string, patterns []string) {
	for j, s := range patterns {
		if _, err := ParsePattern(s); err != nil {
			bad(fmt.Sprintf("%s[%d]", key, j), "%v", err)
		}
	}
}

func validateProduceGovernance(bad func(string, string, ...any), key string, pr *ProduceGovernance) {
	if pr.RequiredAcks != "" {
		if _, err := ParseRequiredAcks(pr.RequiredAcks); err != nil {
			bad(key+".required_acks", "%v", err)
		}
	}
	for j, c := range pr.AllowedCompression {
		if !contains(CompressionCodecs(), strings.ToLower(c)) {
			bad(fmt.Sprintf("%s.allowed_compression[%d]", key, j), "%q is not a codec; valid: %s", c, strings.Join(CompressionCodecs(), ", "))
		}
	}
	if pr.MaxBatchBytes < 0 {
		bad(key+".max_batch_bytes", "%d: must be positive (0: no bound)", pr.MaxBatchBytes)
	}
}

func validateTopicGovernance(bad func(string, string, ...any), key string, tc *TopicGovernance) {
	if tc.NamePattern != "" {
		if _, err := ParsePattern(tc.NamePattern); err != nil {
			bad(key+".name_pattern", "%v", err)
		}
	}
	if tc.MaxPartitions < 0 {
		bad(key+".max_partitions", "%d: must be positive (0: no bound)", tc.MaxPartitions)
	}
	if tc.MinReplicationFactor < 0 {
		bad(key+".min_replication_factor", "%d: must be positive (0: no bound)", tc.MinReplicationFactor)
	}
	if tc.MaxReplicationFactor < 0 {
		bad(key+".max_replication_factor", "%d: must be positive (0: no bound)", tc.MaxReplicationFactor)
	}
	if tc.MaxReplicationFactor > 0 && tc.MinReplicationFactor > tc.MaxReplicationFactor {
		bad(key+".min_replication_factor", "%d is above max_replication_factor %d", tc.MinReplicationFactor, tc.MaxReplicationFactor)
	}
	for j, s := range tc.RequiredConfigs {
		if _, err := ParseConfigRequirement(s); err != nil {
			bad(fmt.Sprintf("%s.required_configs[%d]", key, j), "%v", err)
		}
	}
	validatePatterns(bad, key+".forbidden_configs", tc.ForbiddenConfigs)
}

// ruleKinds lists the configuration keys of the resource types r names.
func ruleKinds(r Rule) []string {
	var kinds []acl.ResourceType
	for _, rt := range acl.ResourceTypes() {
		if r.Names(rt) {
			kinds = append(kinds, rt)
		}
	}
	return resourceKeys(kinds)
}

func resourceKeys(types []acl.ResourceType) []string {
	var keys []string
	for _, rt := range types {
		keys = append(keys, rt.ConfigKey())
	}
	return keys
}

func appliesToAny(op acl.Operation, r Rule) bool {
	for _, rt := range op.AppliesTo() {
		if r.Names(rt) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// PolicyWarnings lists what is valid in the policy but likely not what the
// operator meant, each naming its key: grants to principals a client
// chooses. A client_id: principal is whatever client id the client puts
// in each request's header, so on listeners without authentication (no
// SASL, no required client certificate) a rule granting it more than
// describe grants that to anyone who can connect. A deny or governance
// entry that only client_id: principals select is escaped, on any
// listener, by sending another client id. It also lists the listeners'
// settings that let in more than an operator may mean (listenerWarnings).
// kproxy validate prints them and kproxy run logs them at start.
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

// servedPolicyWarnings are PolicyWarnings of one engine's configuration.
func (c *Config) servedPolicyWarnings() []string {
	p := c.Policy
	if p == nil {
		return nil
	}
	authenticated := c.Listeners.SASL != nil || (c.Listeners.TLS != nil && c.Listeners.TLS.ClientAuth == tlsconfig.ClientAuthRequire)
	var out []string
	for i, r := range p.Rules {
		ids := clientIDPrincipals(r.Principals)
		if len(ids) == 0 {
			continue
		}
		key := fmt.Sprintf("policy.rules[%d]", i)
		if !authenticated {
			var granted []string
			for _, s := range r.Allow {
				if op, ok := acl.ParseOperation(s); ok && op != acl.Describe {
					granted = append(granted, op.ConfigName())
				}
			}
			if len(granted) > 0 {
				out = append(out, fmt.Sprintf("%s: rule %q grants %s to %s, which any client can claim: listeners have no authentication (no listeners.sasl, no listeners.tls.client_auth: require); grant it to User: or cn: principals, or grant client_id: principals only describe",
					key, r.Name, strings.Join(granted, ", "), strings.Join(ids, ", ")))
			}
		}
		if len(r.Deny) > 0 && len(ids) == len(r.Principals) {
			out = append(out, fmt.Sprintf("%s: rule %q denies only by client id (%s): a client escapes it by sending another client id",
				key, r.Name, strings.Join(ids, ", ")))
		}
	}
	for i, g := range p.Governance {
		if ids := clientIDPrincipals(g.Principals); len(ids) > 0 && len(ids) == len(g.Principals) {
			out = append(out, fmt.Sprintf("policy.governance[%d]: governance %q applies only by client id (%s): a client escapes it by sending another client id",
				i, g.Name, strings.Join(ids, ", ")))
		}
	}
	return out
}

func clientIDPrincipals(list []string) []string {
	var ids []string
	for _, s := range list {
		if pm, err := ParsePrincipal(s); err == nil && pm.Kind == PrincipalClientID {
			ids = append(ids, s)
		}
	}
	return ids
}
