package largemessage

import (
	"fmt"

	"github.com/kproxy/kproxy/internal/largemessage/largemessageconfig"
	"github.com/kproxy/kproxy/policy"
)

// rules are a section's topic rules compiled, swapped whole on reload.
type rules struct {
	list []rule
}

// rule is one topics[] entry.
type rule struct {
	match     policy.NamePattern
	threshold int64
	trigger   []byte // the header_trigger header's name
}

// compileRules compiles a validated section.
func compileRules(c *largemessageconfig.Config) (*rules, error) {
	rs := &rules{}
	for i, t := range c.Topics {
		m, err := policy.CompileNamePattern(t.Match)
		if err != nil {
			return nil, fmt.Errorf("topics[%d].match: %w", i, err)
		}
		rs.list = append(rs.list, rule{match: m, threshold: t.ThresholdBytes, trigger: []byte(t.HeaderTrigger)})
	}
	return rs, nil
}

// find is the first rule matching topic (the client's name).
func (rs *rules) find(topic string) (*rule, bool) {
	for i := range rs.list {
		if rs.list[i].match.Match(topic) {
			return &rs.list[i], true
		}
	}
	return nil, false
}
