package helmtest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite values.schema.json's sections taken from configs/kproxy.schema.json")

// configSchemaPath is the schema kproxy generates for its configuration.
var configSchemaPath = filepath.Join("..", "..", "..", "configs", "kproxy.schema.json")

// valuesSchemaPath is the chart's values schema.
var valuesSchemaPath = filepath.Join(chartDir, "values.schema.json")

// passthroughSections maps each values key whose value the chart writes
// into kproxy.yaml unchanged to its configuration key ("" is the whole
// configuration). Their values schema is kproxy's own, so a key kproxy
// gains is a value the chart accepts without a chart change.
var passthroughSections = map[string]string{
	"log":                        "log",
	"limits":                     "limits",
	"audit":                      "audit",
	"tracing":                    "tracing",
	"metrics":                    "metrics",
	"encryption":                 "encryption",
	"largeMessages":              "large_messages",
	"policy":                     "policy",
	"virtualClusters":            "virtual_clusters",
	"upstream.embedded":          "upstream.embedded",
	"listeners.brokers":          "listeners.brokers",
	"listeners.sasl.oauthbearer": "listeners.sasl.oauthbearer",
	"extraConfig":                "",
}

// TestValuesSchemaEmbedsConfigSchema: each passthrough section of
// values.schema.json is kproxy's schema for that key, $refs resolved.
// `go test -run TestValuesSchemaEmbedsConfigSchema -update` rewrites them.
func TestValuesSchemaEmbedsConfigSchema(t *testing.T) {
	config := readJSON(t, configSchemaPath)
	values := readJSON(t, valuesSchemaPath)
	defs, _ := config["$defs"].(map[string]any)
	for valuesKey, configKey := range passthroughSections {
		want := resolveRefs(schemaNode(t, config, configKey), defs)
		if configKey == "" {
			want = withoutKeys(want, "$defs", "$schema", "title")
		}
		parent, leaf := schemaParent(t, values, valuesKey)
		parent[leaf] = want
	}
	got, err := marshalSchema(values)
	if err != nil {
		t.Fatal(err)
	}
	checkGenerated(t, valuesSchemaPath, got, "TestValuesSchemaEmbedsConfigSchema")
}

// checkGenerated fails unless the file at path holds want; with -update it
// writes want there instead. test names the test that regenerates it.
func checkGenerated(t *testing.T, path string, want []byte, test string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s is not what it is generated from (%v); run go test -run %s -update", path, err, test)
	}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func marshalSchema(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return b.Bytes(), err
}

// schemaNode is the schema of a dotted key ("" the root) in a JSON
// schema, array items stepped through.
func schemaNode(t *testing.T, root map[string]any, key string) map[string]any {
	t.Helper()
	node := root
	defs, _ := root["$defs"].(map[string]any)
	for part := range strings.SplitSeq(key, ".") {
		if part == "" {
			continue
		}
		node = deref(node, defs)
		if items, ok := node["items"].(map[string]any); ok {
			node = deref(items, defs)
		}
		props, _ := node["properties"].(map[string]any)
		next, ok := props[part].(map[string]any)
		if !ok {
			t.Fatalf("schema has no key %q (at %q)", key, part)
		}
		node = next
	}
	return deref(node, defs)
}

// schemaParent is the properties map holding the last part of a dotted
// values key, and that part.
func schemaParent(t *testing.T, root map[string]any, key string) (map[string]any, string) {
	t.Helper()
	parts := strings.Split(key, ".")
	node := root
	for _, part := range parts[:len(parts)-1] {
		props, _ := node["properties"].(map[string]any)
		next, ok := props[part].(map[string]any)
		if !ok {
			t.Fatalf("values schema has no %q (at %q)", key, part)
		}
		node = next
	}
	props, ok := node["properties"].(map[string]any)
	if !ok {
		t.Fatalf("values schema: %q's parent has no properties", key)
	}
	return props, parts[len(parts)-1]
}

func deref(node, defs map[string]any) map[string]any {
	ref, ok := node["$ref"].(string)
	if !ok {
		return node
	}
	def, _ := defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
	return def
}

// resolveRefs copies a schema node with every $ref replaced by its
// definition: the values schema has no $defs of its own.
func resolveRefs(node any, defs map[string]any) map[string]any {
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["$ref"]; ok {
				return walk(deref(v, defs))
			}
			out := map[string]any{}
			for k, e := range v {
				out[k] = walk(e)
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, e := range v {
				out[i] = walk(e)
			}
			return out
		}
		return v
	}
	return walk(node).(map[string]any)
}

func withoutKeys(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for _, k := range keys {
		delete(out, k)
	}
	return out
}
