package encryption

import (
	"fmt"

	"github.com/kproxy/kproxy/internal/encryption/encryptionconfig"
	"github.com/kproxy/kproxy/internal/encryption/envelope"
	"github.com/kproxy/kproxy/internal/kms"
	"github.com/kproxy/kproxy/policy"
)

// rules are a section's topic rules compiled, swapped whole on reload.
type rules struct {
	list        []rule
	passthrough bool // on_missing_key: passthrough
}

// rule is one topics[] entry.
type rule struct {
	match policy.NamePattern
	key   kms.KeyTemplate
	parts envelope.Parts
}

// compileRules compiles a validated section.
func compileRules(c *encryptionconfig.Config) (*rules, error) {
	rs := &rules{passthrough: c.OnMissingKey == encryptionconfig.MissingKeyPassthrough}
	for i, t := range c.Topics {
		at := fmt.Sprintf("topics[%d]", i)
		m, err := policy.CompileNamePattern(t.Match)
		if err != nil {
			return nil, fmt.Errorf("%s.match: %w", at, err)
		}
		k, err := kms.ParseKeyTemplate(at+".key", t.Key)
		if err != nil {
			return nil, err
		}
		parts, err := encryptionconfig.ParseParts(t.Encrypt)
		if err != nil {
			return nil, fmt.Errorf("%s.encrypt: %w", at, err)
		}
		rs.list = append(rs.list, rule{match: m, key: k, parts: parts})
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
