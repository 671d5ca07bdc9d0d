package policy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kproxy/kproxy/config"
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
	required    []config.ConfigRequirement
	forbidden   []matcher
}

func compileGovernance(list []config.Governance) (governance, error) {
	var g governance
	for i, c := range list {
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

func compileGovRule(c config.Governance) (govRule, error) {
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
			acks, err := config.ParseRequiredAcks(p.RequiredAcks)
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
			req, err := config.ParseConfigRequirement(s)
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
		key, ok := config.APIKeyByName(name)
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
	for i, c := range config.CompressionCodecs() {
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

// checkTopicShape checks a topic about to be created with partitions and
// replication factor (either -1 when left to the broker) and configs.
func (r *govRule) checkTopicShape(topic string, partitions int32, rf int16, configs map[string]*string) *violation {
	t := r.topic
	fail := func(check, format string, args ...any) *violation {
		return &violation{rule: r.name, check: check, code: errPolicyViolation, what: fmt.Sprintf(format, args...)}
	}
	if t.namePattern != nil && !t.namePattern.match(topic) {
		return fail("name_pattern", "topic name %q does not match name_pattern %q", topic, t.namePattern.source)
	}
	// A partition count left to the broker (-1) passes max_partitions:
	// kproxy cannot know the broker's default.
	if t.maxParts > 0 && partitions > t.maxParts {
		return fail("max_partitions", "%d partitions exceed max_partitions %d", partitions, t.maxParts)
	}
	// A replication factor left to the broker fails a minimum: the rule
	// asks for an explicit guarantee.
	if t.minRF > 0 && rf < t.minRF {
		if rf < 0 {
			return fail("min_replication_factor", "replication factor left to the broker default; min_replication_factor %d requires an explicit one", t.minRF)
		}
		return fail("min_replication_factor", "replication factor %d is below min_replication_factor %d", rf, t.minRF)
	}
	if t.maxRF > 0 && rf > t.maxRF {
		return fail("max_replication_factor", "replication factor %d exceeds max_replication_factor %d", rf, t.maxRF)
	}
	return r.checkConfigs(configs, true)
}

// checkConfigs checks a topic's configs: set maps each key being set to its
// value; complete says set is the whole config (CreateTopics, AlterConfigs)
// rather than a change (IncrementalAlterConfigs), so that required keys
// must be present.
func (r *govRule) checkConfigs(set map[string]*string, complete bool) *violation {
	t := r.topic
	for key := range set {
		for i := range t.forbidden {
			if t.forbidden[i].match(key) {
				return &violation{rule: r.name, check: "forbidden_configs", code: errPolicyViolation,
					what: fmt.Sprintf("config %q is forbidden (forbidden_configs %q)", key, t.forbidden[i].source)}
			}
		}
	}
	for _, req := range t.required {
		v, ok := set[req.Key]
		if !ok {
			if complete {
				return &violation{rule: r.name, check: "required_configs", code: errPolicyViolation,
					what: fmt.Sprintf("config %s must be set (required_configs %q)", req.Key, req.String())}
			}
			continue
		}
		if v == nil || !satisfies(*v, req) {
			got := "null"
			if v != nil {
				got = strconv.Quote(*v)
			}
			return &violation{rule: r.name, check: "required_configs", code: errPolicyViolation,
				what: fmt.Sprintf("config %s = %s does not satisfy required_configs %q", req.Key, got, req.String())}
		}
	}
	return nil
}

// satisfies compares value against a requirement: numerically when both
// sides are numbers, else as strings (only = and != then hold meaning).
func satisfies(value string, req config.ConfigRequirement) bool {
	a, errA := strconv.ParseFloat(strings.TrimSpace(value), 64)
	b, errB := strconv.ParseFloat(req.Value, 64)
	if errA != nil || errB != nil {
		switch req.Op {
		case "=":
			return value == req.Value
		case "!=":
			return value != req.Value
		}
		return false
	}
	switch req.Op {
	case "=":
		return a == b
	case "!=":
		return a != b
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	case ">=":
		return a >= b
	}
	return false
}
