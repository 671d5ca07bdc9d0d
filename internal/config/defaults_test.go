package config

import (
	"bytes"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestDefaultsYAMLRuns: the printed defaults are a valid configuration
// once an upstream is named, and it runs with the values the code gives
// keys left out (the file changes nothing).
func TestDefaultsYAMLRuns(t *testing.T) {
	printed := string(DefaultsYAML())
	const empty = "\n  bootstrap_servers: []\n"
	if !strings.Contains(printed, empty) {
		t.Fatalf("no %q line to name the upstream in:\n%s", strings.TrimSpace(empty), printed)
	}
	withUpstream := strings.Replace(printed, empty, "\n  bootstrap_servers: [\"127.0.0.1:9092\"]\n", 1)
	got, err := Parse(strings.NewReader(withUpstream))
	if err != nil {
		t.Fatalf("kproxy config defaults with an upstream does not load: %v", err)
	}
	want, err := Parse(strings.NewReader(`upstream: {bootstrap_servers: ["127.0.0.1:9092"]}`))
	if err != nil {
		t.Fatal(err)
	}
	got.applyReadDefaults()
	want.applyReadDefaults()
	gotYAML, _ := yaml.Marshal(got)
	wantYAML, _ := yaml.Marshal(want)
	if !bytes.Equal(gotYAML, wantYAML) {
		t.Errorf("the defaults file loads as\n%s\nbut a file naming only the upstream loads as\n%s", gotYAML, wantYAML)
	}
}

// TestDefaultsYAMLKeys: with its commented-out sections and list entries
// written, the defaults file holds only keys of the Config type (decoded
// as kproxy decodes, unknown keys refused), every one of them documented,
// and every key of the file appears in it.
func TestDefaultsYAMLKeys(t *testing.T) {
	all := renderDefaults(true)
	dec := yaml.NewDecoder(bytes.NewReader(all))
	dec.KnownFields(true)
	var cfg Config
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("defaults with every section written do not decode: %v\n%s", explainYAMLError(all, err), all)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(all, &root); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		switch n.Kind {
		case yaml.DocumentNode:
			walk(n.Content[0], prefix)
		case yaml.MappingNode:
			for i := 0; i < len(n.Content); i += 2 {
				k, v := n.Content[i].Value, n.Content[i+1]
				path := prefix + k
				if v.Kind == yaml.SequenceNode && len(v.Content) > 0 && v.Content[0].Kind == yaml.MappingNode {
					path += "[]"
				}
				seen[CanonicalKey(path)] = true
				if _, ok := LookupKey(path); !ok {
					t.Errorf("defaults file: key %s has no row in Reference", path)
				}
				walk(v, path+".")
			}
		case yaml.SequenceNode:
			for _, item := range n.Content {
				walk(item, prefix)
			}
		}
	}
	walk(&root, "")
	for _, d := range Reference() {
		if !seen[d.Key] {
			t.Errorf("defaults file: no line for %s", d.Key)
		}
	}
}
