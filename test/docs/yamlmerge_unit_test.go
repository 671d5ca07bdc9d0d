package docs

import (
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestMergeInto: maps merge key by key; lists and scalars replace.
func TestMergeInto(t *testing.T) {
	var base, frag, want any
	for text, into := range map[string]*any{
		`{upstream: {bootstrap_servers: [a, b], dial_timeout: 10s}, log: {level: info}}`:                       &base,
		`{upstream: {bootstrap_servers: [c]}, policy: {default: deny}}`:                                        &frag,
		`{upstream: {bootstrap_servers: [c], dial_timeout: 10s}, log: {level: info}, policy: {default: deny}}`: &want,
	} {
		if err := yaml.Unmarshal([]byte(text), into); err != nil {
			t.Fatal(err)
		}
	}
	if got := mergeInto(base, frag); !reflect.DeepEqual(got, want) {
		t.Fatalf("merged:\n%v\nwant:\n%v", got, want)
	}
}
