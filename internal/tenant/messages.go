package tenant

import "strings"

// Error messages are the upstream's free text, and some name more than the
// request did: a CreateTopics collision names the existing topic the new
// one collides with ("Topic 'x' collides with existing topic: y"), which
// may be another tenant's or the operator's. A message passes to the
// tenant with its own names unprefixed; one that may still name anything
// else is withheld (msgWithheld in its place; the error code is kept).
//
// A message can be checked only by the shape of its words: the tenant's
// own names start with one of its prefixes, at the start of a word; any
// other word holding a '_' or a '.' inside it (Kafka's names do, prose
// does not; the collision rule makes every colliding name hold one, and
// internal topics do) is taken for a name. Prose keeps its words, numbers
// and hyphens; a message naming a config key or an address is withheld
// too, which costs the tenant only the message.

// msgWithheld replaces an upstream error message that may name what is not
// the tenant's.
const msgWithheld = "kproxy: the cluster's error message was withheld: it may name a resource outside this virtual cluster"

// DownMessage maps an error message the upstream wrote to what the tenant
// may read: its own names without their prefixes, or msgWithheld when the
// message may name anything else. nil and "" stay as they are.
func (m *Mapper) DownMessage(msg *string) {
	if msg == nil || *msg == "" {
		return
	}
	*msg = m.downMessage(*msg)
}

func (m *Mapper) downMessage(s string) string {
	n := m.names
	if n.Topic == "" && n.Group == "" && n.TransactionalID == "" {
		return s // alone on its upstream: every name is the tenant's
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		wordStart := i == 0 || !isNameChar(s[i-1])
		if p := m.ownPrefixAt(s, i); wordStart && p != "" {
			j := i + len(p)
			k := j
			for k < len(s) && isNameChar(s[k]) {
				k++
			}
			b.WriteString(s[j:k])
			i = k
			continue
		}
		if !isNameChar(s[i]) {
			b.WriteByte(s[i])
			i++
			continue
		}
		k := i
		for k < len(s) && isNameChar(s[k]) {
			k++
		}
		if looksLikeName(s[i:k]) {
			return msgWithheld
		}
		b.WriteString(s[i:k])
		i = k
	}
	return b.String()
}

// ownPrefixAt is the longest of the tenant's prefixes s has at i, "" for
// none.
func (m *Mapper) ownPrefixAt(s string, i int) string {
	var best string
	for _, p := range []string{m.names.Topic, m.names.Group, m.names.TransactionalID} {
		if p != "" && len(p) > len(best) && strings.HasPrefix(s[i:], p) {
			best = p
		}
	}
	return best
}

// isNameChar: the characters Kafka allows in topic names.
func isNameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// looksLikeName reports whether word (a run of name characters) may be a
// topic, group or transactional id rather than prose: a '_' anywhere or a
// '.' before its end (a sentence's full stop is prose).
func looksLikeName(word string) bool {
	return strings.ContainsRune(word, '_') || strings.Contains(strings.TrimRight(word, "."), ".")
}
