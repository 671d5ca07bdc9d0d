package policy

import (
	"sort"

	"github.com/kproxy/kproxy/internal/acl"
)

// ImpliedOperations returns the operations a rule allowing op also allows,
// as Kafka's authorizer implies them (Read, Write, Delete or Alter imply
// Describe; AlterConfigs implies DescribeConfigs; All implies every one).
// A deny implies nothing.
func ImpliedOperations(op Operation) []Operation {
	var implied []Operation
	for _, other := range acl.Operations() {
		if other != op && maskOf(op).withImplied()&maskOf(other) != 0 {
			implied = append(implied, other)
		}
	}
	return implied
}

// RevealingAPI is one API key whose response has fields that can name a
// topic (by name or id), a group or a transactional id, or that say what
// the principal may do or carry free text, with how the policy keeps them
// to what the principal may describe.
type RevealingAPI struct {
	Key    int16
	Fields []RevealingField
	// Handling says, in words, how the policy handles those fields.
	Handling string
}

// RevealingField is one such field: its path in the response (as kmsg's
// field names, dot-separated) and what it can reveal.
type RevealingField struct {
	Path string
	Kind string
}

// RevealingAPIs returns every API key kmsg knows whose response has such
// fields, by key.
func RevealingAPIs() []RevealingAPI {
	fields := revealFields()
	keys := make([]int, 0, len(fields))
	for k := range fields {
		keys = append(keys, int(k))
	}
	sort.Ints(keys)
	apis := make([]RevealingAPI, 0, len(keys))
	for _, k := range keys {
		api := RevealingAPI{Key: int16(k), Handling: revealHandling(int16(k))}
		for _, f := range fields[int16(k)] {
			api.Fields = append(api.Fields, RevealingField{Path: f.path, Kind: string(f.kind)})
		}
		apis = append(apis, api)
	}
	return apis
}
