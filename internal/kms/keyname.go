package kms

import (
	"fmt"
	"strings"
)

// The placeholders of a `key:` template.
const (
	TopicPlaceholder          = "$(topic)"
	VirtualClusterPlaceholder = "$(virtual_cluster)"
)

// KeyTemplate is a parsed `key:` selector: literal text and placeholders.
type KeyTemplate struct {
	text  string
	parts []templatePart
}

type templatePart struct {
	literal     string
	placeholder string // "" for a literal
}

// ParseKeyTemplate parses the template at configuration key path. The
// literal text may hold what KMS key ids, ARNs and alias names are made
// of: [a-zA-Z0-9/_:-]; anything else, such as a misspelt placeholder, is
// refused.
func ParseKeyTemplate(path, text string) (KeyTemplate, error) {
	if text == "" {
		return KeyTemplate{}, fmt.Errorf("%s: empty key", path)
	}
	t := KeyTemplate{text: text}
	rest := text
	for rest != "" {
		i := strings.Index(rest, "$(")
		lit := rest
		if i >= 0 {
			lit = rest[:i]
		}
		if bad := strings.IndexFunc(lit, func(r rune) bool { return !isKeyNameByte(r) && r != ':' }); bad >= 0 {
			return KeyTemplate{}, fmt.Errorf("%s %q: %q is not allowed in a key name (only letters, digits, '/', '_', '-', ':' and the placeholders %s, %s)",
				path, text, lit[bad:bad+1], TopicPlaceholder, VirtualClusterPlaceholder)
		}
		if lit != "" {
			t.parts = append(t.parts, templatePart{literal: lit})
		}
		if i < 0 {
			break
		}
		rest = rest[i:]
		end := strings.IndexByte(rest, ')')
		if end < 0 || (rest[:end+1] != TopicPlaceholder && rest[:end+1] != VirtualClusterPlaceholder) {
			return KeyTemplate{}, fmt.Errorf("%s %q: unknown placeholder at %q (there are %s and %s)", path, text, rest, TopicPlaceholder, VirtualClusterPlaceholder)
		}
		t.parts = append(t.parts, templatePart{placeholder: rest[:end+1]})
		rest = rest[end+1:]
	}
	return t, nil
}

// String is the template as written.
func (t KeyTemplate) String() string { return t.text }

// HasTopic tells whether the key name depends on the topic.
func (t KeyTemplate) HasTopic() bool { return t.has(TopicPlaceholder) }

// HasVirtualCluster tells whether the key name depends on the virtual
// cluster.
func (t KeyTemplate) HasVirtualCluster() bool { return t.has(VirtualClusterPlaceholder) }

func (t KeyTemplate) has(placeholder string) bool {
	for _, p := range t.parts {
		if p.placeholder == placeholder {
			return true
		}
	}
	return false
}

// Name is the KMS key name for a topic of a virtual cluster, each
// substituted through EscapeKeyName.
func (t KeyTemplate) Name(virtualCluster, topic string) string {
	return string(t.AppendName(nil, virtualCluster, topic))
}

// AppendName appends Name to dst.
func (t KeyTemplate) AppendName(dst []byte, virtualCluster, topic string) []byte {
	dst, _ = t.appendUntil(dst, virtualCluster, topic, false)
	return dst
}

// prefix is the part of the name fixed for a virtual cluster: the name up
// to the first $(topic), and whether a topic follows.
func (t KeyTemplate) prefix(virtualCluster string) (fixed string, open bool) {
	b, open := t.appendUntil(nil, virtualCluster, "", true)
	return string(b), open
}

// appendUntil appends the name, or with atTopic only what comes before
// the first $(topic), reporting whether it stopped there.
func (t KeyTemplate) appendUntil(dst []byte, virtualCluster, topic string, atTopic bool) ([]byte, bool) {
	for _, p := range t.parts {
		switch p.placeholder {
		case "":
			dst = append(dst, p.literal...)
		case VirtualClusterPlaceholder:
			dst = AppendEscapedKeyName(dst, virtualCluster)
		case TopicPlaceholder:
			if atTopic {
				return dst, true
			}
			dst = AppendEscapedKeyName(dst, topic)
		}
	}
	return dst, false
}
