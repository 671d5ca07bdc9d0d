package main

import (
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ruleLines returns the line in the file at path of each rule under key
// ("policy", "virtual_clusters[1].policy"), for explain to point at; nil
// when the file cannot be read again (explain then names rules by index
// alone).
func ruleLines(path, key string) []int {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	node := doc.Content[0]
	for _, part := range strings.Split(key+".rules", ".") {
		name, index, indexed := strings.Cut(strings.TrimSuffix(part, "]"), "[")
		if node = mappingValue(node, name); node == nil {
			return nil
		}
		if indexed {
			i, err := strconv.Atoi(index)
			if err != nil || node.Kind != yaml.SequenceNode || i >= len(node.Content) {
				return nil
			}
			node = node.Content[i]
		}
	}
	if node.Kind != yaml.SequenceNode {
		return nil
	}
	lines := make([]int, len(node.Content))
	for i, rule := range node.Content {
		lines[i] = rule.Line
	}
	return lines
}

// mappingValue is the value of key in the mapping node m, nil without one.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
