package policy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kproxy/kproxy/policy/policyconfig"
)

// governance is the compiled governance section: constraints on requests
// the rules allowed. Every rule whose scope matches applies; the first
// violation found is the one reported.
type governance struct {
	rules []govRule
	// hasClientID and forbids let requests that no governance touches skip
	// the per-principal scan.
	hasClientID bool
	forbids     bool
	defaults    brokerDefaults
}

type govRule struct {
	name       string
	principals []principalMatcher // empty: everyone
	topics     []matcher          // empty: every topic
	produce    *produceGov
	topic      *topicGov
	clientID   *matcher
	forbidden  map[int16]bool
}

type produceGov struct {
	checkAcks   bool
	minAcks     int16 // -1 (all) or 1
	compression uint8 // bitset over codec numbers; 0: any
	maxBatch    int
	idempotent  bool
}

type topicGov struct {
	namePattern *matcher
	maxParts    int32
	minRF       int16
	maxRF       int16
	required    []policyconfig.ConfigRequirement
	forbidden   []matcher
}

func compileGovernance(p *policyconfig.Policy) (governance, error) {
	var g governance
	if d := p.BrokerDefaults; d != nil {
		g.defaults = brokerDefaults{partitions: d.NumPartitions, rf: d.DefaultReplicationFactor}
	}
	for i, c := range p.Governance {
		r, err := compileGovRule(c)
		if err != nil {
			return g, fmt.Errorf("policy.governance[%d] (%s): %w", i, c.Name, err)
		}
		g.hasClientID = g.hasClientID || r.clientID != nil
		g.forbids = g.forbids || len(r.forbidden) > 0
		g.rules = append(g.rules, r)
	}
	return g, nil
}

func compileGovRule(c policyconfig.Governance) (govRule, error) {
	r := govRule{name: c.Name}
	var err error
	if r.principals, err = compilePrincipals(c.Principals); err != nil {
		return r, err
	}
	if r.topics, err = parseMatchers(c.Topics); err != nil {
		return r, err
	}
	if p := c.Produce; p != nil {
		pg := &produceGov{maxBatch: p.MaxBatchBytes, idempotent: p.RequireIdempotence}
		if p.RequiredAcks != "" {
			acks, err := policyconfig.ParseRequiredAcks(p.RequiredAcks)
			if err != nil {
				return r, err
			}
			pg.checkAcks, pg.minAcks = acks != 0, acks
		}
		for _, name := range p.AllowedCompression {
			codec := codecByName(strings.ToLower(name))
			if codec < 0 {
				return r, fmt.Errorf("%q is not a compression codec", name)
			}
			pg.compression |= 1 << codec
		}
		r.produce = pg
	}
	if t := c.TopicChanges; t != nil {
		tg := &topicGov{maxParts: t.MaxPartitions, minRF: t.MinReplicationFactor, maxRF: t.MaxReplicationFactor}
		if t.NamePattern != "" {
			ms, err := parseMatchers([]string{t.NamePattern})
			if err != nil {
				return r, err
			}
			tg.namePattern = &ms[0]
		}
		for _, s := range t.RequiredConfigs {
			req, err := policyconfig.ParseConfigRequirement(s)
			if err != nil {
				return r, err
			}
			tg.required = append(tg.required, req)
		}
		if tg.forbidden, err = parseMatchers(t.ForbiddenConfigs); err != nil {
			return r, err
		}
		r.topic = tg
	}
	if c.ClientIDPattern != "" {
		ms, err := parseMatchers([]string{c.ClientIDPattern})
		if err != nil {
			return r, err
		}
		r.clientID = &ms[0]
	}
	for _, name := range c.ForbiddenAPIs {
		key, ok := policyconfig.APIKeyByName(name)
		if !ok {
			return r, fmt.Errorf("%q is not an API name", name)
		}
		if r.forbidden == nil {
			r.forbidden = map[int16]bool{}
		}
		r.forbidden[key] = true
	}
	return r, nil
}

func codecByName(name string) int {
	for i, c := range policyconfig.CompressionCodecs() {
		if c == name {
			return i
		}
	}
	return -1
}

func (r *govRule) coversTopic(topic string) bool {
	return len(r.topics) == 0 || anyMatch(r.topics, topic)
}

// violation is a governance failure: the rule, the Kafka error code the
// client gets, and what was wrong.
type violation struct {
	rule  string
	check string // the governance key that failed, e.g. "max_partitions"
	code  int16
	what  string
}

func (v *violation) denial() *denial {
	return &denial{code: v.code, msg: fmt.Sprintf("kproxy policy %q: %s", v.rule, v.what)}
}

// configEntry is one config a request sets: value nil when the request
// sends null.
type configEntry struct {
	name  string
	value *string
}

// newTopic is a topic about to be created, as governance sees it:
// partitions and replication factor -1 when left to the broker (resolved
// with policy.broker_defaults where declared), minRF and maxRF the
// smallest and largest replica count (they differ only in an explicit
// assignment, which the broker then refuses).
type newTopic struct {
	name         string
	partitions   int32
	minRF, maxRF int16
	configs      []configEntry
}

// resolve fills in the broker's defaults for what the request left to it,
// where the operator declared them.
func (t newTopic) resolve(d brokerDefaults) newTopic {
	if t.partitions < 0 && d.partitions > 0 {
		t.partitions = d.partitions
	}
	if t.minRF < 0 && d.rf > 0 {
		t.minRF, t.maxRF = d.rf, d.rf
	}
	return t
}

// brokerDefaults are policy.broker_defaults; 0: unknown.
type brokerDefaults struct {
	partitions int32
	rf         int16
}

// checkTopicShape checks a topic about to be created. A count still left
// to the broker (no broker_defaults) fails any bound on it: kproxy cannot
// know what the broker will choose, and a bound it cannot check must not
// pass (fail closed).
func (r *govRule) checkTopicShape(t newTopic) *violation {
	g := r.topic
	fail := func(check, format string, args ...any) *violation {
		return &violation{rule: r.name, check: check, code: errPolicyViolation, what: fmt.Sprintf(format, args...)}
	}
	if g.namePattern != nil && !g.namePattern.match(t.name) {
		return fail("name_pattern", "topic name %q does not match name_pattern %q", t.name, g.namePattern.source)
	}
	if g.maxParts > 0 && t.partitions < 0 {
		return fail("max_partitions", "partition count left to the broker default, which kproxy does not know; max_partitions %d requires an explicit one (or policy.broker_defaults.num_partitions)", g.maxParts)
	}
	if g.maxParts > 0 && t.partitions > g.maxParts {
		return fail("max_partitions", "%d partitions exceed max_partitions %d", t.partitions, g.maxParts)
	}
	if (g.minRF > 0 || g.maxRF > 0) && t.minRF < 0 {
		return fail(rfCheck(g), "replication factor left to the broker default, which kproxy does not know; %s requires an explicit one (or policy.broker_defaults.default_replication_factor)", rfBounds(g))
	}
	if g.minRF > 0 && t.minRF < g.minRF {
		return fail("min_replication_factor", "replication factor %d is below min_replication_factor %d", t.minRF, g.minRF)
	}
	if g.maxRF > 0 && t.maxRF > g.maxRF {
		return fail("max_replication_factor", "replication factor %d exceeds max_replication_factor %d", t.maxRF, g.maxRF)
	}
	return r.checkConfigs(t.configs, true)
}

func rfCheck(g *topicGov) string {
	if g.minRF > 0 {
		return "min_replication_factor"
	}
	return "max_replication_factor"
}

func rfBounds(g *topicGov) string {
	switch {
	case g.minRF > 0 && g.maxRF > 0:
		return fmt.Sprintf("min_replication_factor %d and max_replication_factor %d", g.minRF, g.maxRF)
	case g.minRF > 0:
		return fmt.Sprintf("min_replication_factor %d", g.minRF)
	}
	return fmt.Sprintf("max_replication_factor %d", g.maxRF)
}

// checkConfigs checks the configs a request sets. complete says they are
// the topic's whole config (CreateTopics, AlterConfigs) rather than a
// change, so that required keys must be among them. Every entry is
// checked, duplicates included: which one the broker keeps is its
// business, and none may break a rule.
func (r *govRule) checkConfigs(set []configEntry, complete bool) *violation {
	for _, e := range set {
		if v := r.checkForbidden(e.name); v != nil {
			return v
		}
	}
	for _, req := range r.topic.required {
		found := false
		for _, e := range set {
			if e.name != req.Key {
				continue
			}
			found = true
			if v := r.checkRequired(req, e.value); v != nil {
				return v
			}
		}
		if !found && complete {
			return &violation{rule: r.name, check: "required_configs", code: errPolicyViolation,
				what: fmt.Sprintf("config %s must be set (required_configs %q)", req.Key, req.String())}
		}
	}
	return nil
}

func (r *govRule) checkForbidden(key string) *violation {
	for i, f := range r.topic.forbidden {
		if f.match(key) {
			return &violation{rule: r.name, check: "forbidden_configs", code: errPolicyViolation,
				what: fmt.Sprintf("config %q is forbidden (forbidden_configs %q)", key, r.topic.forbidden[i].source)}
		}
	}
	return nil
}

// checkRequired checks a value set for a required key; null fails.
func (r *govRule) checkRequired(req policyconfig.ConfigRequirement, value *string) *violation {
	if value != nil && satisfies(req.Key, *value, req) {
		return nil
	}
	got := "null"
	if value != nil {
		got = strconv.Quote(*value)
	}
	return &violation{rule: r.name, check: "required_configs", code: errPolicyViolation,
		what: fmt.Sprintf("config %s = %s does not satisfy required_configs %q", req.Key, got, req.String())}
}
