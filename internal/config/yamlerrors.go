package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// yaml.v3 reports each key it could not decode as one line of a
// yaml.TypeError, in Go's terms: "line 6: cannot unmarshal !!str `abc`
// into int", "line 9: field bogus not found in type config.Listeners".
// explainYAMLError finds the node each line is about and rewrites it with
// the key's full path and the kind of value the key takes:
// `line 6: listeners.bootstrap_port: cannot use "abc" as a number`.
var (
	yamlTypeMismatch = regexp.MustCompile("^line (\\d+): cannot unmarshal (!!\\w+)(?: `(.*)`)? into (\\S+)$")
	yamlUnknownField = regexp.MustCompile(`^line (\d+): field (\S+) not found in type \S+$`)
)

// explainYAMLError turns a decoding error of the configuration in data into
// one line per problem, each with its line and key path. Errors that are
// not type errors (YAML syntax) are returned as they are.
func explainYAMLError(data []byte, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return err
	}
	idx := indexKeys(&root)
	lines := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		lines = append(lines, idx.explain(e))
	}
	if len(lines) == 1 {
		return errors.New(lines[0])
	}
	return fmt.Errorf("%d errors:\n  %s", len(lines), strings.Join(lines, "\n  "))
}

// keyedNode is a node of the document with the path of the key it is the
// value of; key is the key's own node (nil for a list item).
type keyedNode struct {
	path  string
	key   *yaml.Node
	value *yaml.Node
	used  bool
}

type keyIndex []*keyedNode

// indexKeys lists every value in the document, in document order, with its
// key path (upstream.bootstrap_servers[0]).
func indexKeys(root *yaml.Node) keyIndex {
	var idx keyIndex
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				idx = append(idx, &keyedNode{path: p, key: k, value: v})
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := path + "[" + strconv.Itoa(i) + "]"
				idx = append(idx, &keyedNode{path: p, value: c})
				walk(c, p)
			}
		}
	}
	walk(root, "")
	return idx
}

// explain rewrites one line of a yaml.TypeError.
func (idx keyIndex) explain(line string) string {
	if m := yamlUnknownField.FindStringSubmatch(line); m != nil {
		n, _ := strconv.Atoi(m[1])
		k := idx.find(func(k *keyedNode) bool { return k.key != nil && k.key.Line == n && k.key.Value == m[2] })
		if k == nil {
			return fmt.Sprintf("line %d: unknown key %q (docs/configuration.md lists every key)", n, m[2])
		}
		return fmt.Sprintf("line %d: %s: unknown key %q (docs/configuration.md lists every key)", n, k.path, m[2])
	}
	m := yamlTypeMismatch.FindStringSubmatch(line)
	if m == nil {
		return line
	}
	n, _ := strconv.Atoi(m[1])
	tag, quoted, into := m[2], m[3], m[4]
	k := idx.findDeepest(func(k *keyedNode) bool {
		v := k.value
		return v.Line == n && v.ShortTag() == tag && (quoted == "" || quotedByYAML(v.Value) == quoted)
	})
	want := describeGoType(into)
	if k == nil {
		return fmt.Sprintf("line %d: cannot use %s as %s", n, describeValue(tag, quoted, ""), want)
	}
	return fmt.Sprintf("line %d: %s: cannot use %s as %s", n, k.path, describeValue(tag, k.value.Value, k.path), want)
}

// find returns the first node not yet explained that match accepts, and
// marks it explained, so that two errors on one line go to two keys.
func (idx keyIndex) find(match func(*keyedNode) bool) *keyedNode {
	for _, k := range idx {
		if !k.used && match(k) {
			k.used = true
			return k
		}
	}
	return nil
}

// findDeepest is find preferring the most deeply nested match: a mapping
// and the first mapping inside it start on one line, and a value of the
// wrong kind is more likely the inner one (the outer one's key takes a
// mapping, or decoding would not have reached the inner one).
func (idx keyIndex) findDeepest(match func(*keyedNode) bool) *keyedNode {
	var best *keyedNode
	for _, k := range idx {
		if !k.used && match(k) && (best == nil || depth(k.path) > depth(best.path)) {
			best = k
		}
	}
	if best != nil {
		best.used = true
	}
	return best
}

func depth(path string) int { return strings.Count(path, ".") + strings.Count(path, "[") }

// quotedByYAML is how yaml.v3 quotes a value in a type error: whole up to
// 10 bytes, else its first 7 and "...".
func quotedByYAML(v string) string {
	if len(v) > 10 {
		return v[:7] + "..."
	}
	return v
}

// describeValue names the value found: quoted if it is a scalar, except
// under keys that may hold secrets (a password written in the wrong place
// must not reach a log).
func describeValue(tag, value, path string) string {
	switch tag {
	case "!!seq":
		return "a list"
	case "!!map":
		return "a mapping"
	case "!!null":
		return "an empty value"
	}
	if mayHoldSecret(path) {
		return "this value"
	}
	return strconv.Quote(value)
}

func mayHoldSecret(path string) bool {
	p := strings.ToLower(path)
	for _, s := range []string{"sasl", "password", "secret", "credential", "token"} {
		if strings.Contains(p, s) {
			return true
		}
	}
	return path == ""
}

// describeGoType says what a key of Go type t takes, in a user's words.
func describeGoType(t string) string {
	t = strings.TrimLeft(t, "*")
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "config."):
		return "a mapping of keys"
	case t == "time.Duration":
		return "a duration (a number with a unit: 500ms, 10s, 5m, 1h)"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "a number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	}
	return t
}
