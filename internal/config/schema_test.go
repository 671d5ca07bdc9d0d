package config

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/testkit/golden"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite the files generated from the reference: configs/kproxy.schema.json and docs/configuration.md")

// root is the repository root: two up from this package.
const root = "../.."

const schemaFile = "configs/kproxy.schema.json"

// TestSchemaFile: the checked-in schema is what kproxy config schema
// prints.
func TestSchemaFile(t *testing.T) {
	want, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join(root, schemaFile), want, *update, "go test ./internal/config -run TestSchemaFile -update")
}

// compiledSchema compiles Schema with a real JSON Schema validator, which
// also checks it against the draft 2020-12 meta-schema.
func compiledSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	data, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("kproxy.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("kproxy.schema.json")
	if err != nil {
		t.Fatalf("the configuration schema does not compile: %v", err)
	}
	return s
}

// yamlAsJSON is a YAML document as the JSON value a schema validates.
func yamlAsJSON(t *testing.T, text string) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("YAML: %v\n%s", err, text)
	}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestSchemaAcceptsTheConfigs: every configuration under configs/ passes
// the schema, as it passes kproxy, and so does the defaults file.
func TestSchemaAcceptsTheConfigs(t *testing.T) {
	schema := compiledSchema(t)
	paths, err := filepath.Glob(filepath.Join(root, "configs", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no configs/*.yaml (%v)", err)
	}
	for _, path := range paths {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(bytes.NewReader(text)); err != nil {
			t.Errorf("%s does not load: %v", path, err)
		}
		if err := schema.Validate(yamlAsJSON(t, string(text))); err != nil {
			t.Errorf("%s fails the schema: %v", path, err)
		}
	}
	defaults := strings.Replace(string(DefaultsYAML()), "bootstrap_servers: []", `bootstrap_servers: ["127.0.0.1:9092"]`, 1)
	if err := schema.Validate(yamlAsJSON(t, defaults)); err != nil {
		t.Errorf("kproxy config defaults fails the schema: %v", err)
	}
}

// TestSchemaRefusesWrongConfigs: what kproxy refuses for its keys or
// their types, the schema refuses too, so an editor shows it.
func TestSchemaRefusesWrongConfigs(t *testing.T) {
	schema := compiledSchema(t)
	const upstream = "upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\n"
	for _, tt := range []struct{ name, body, where string }{
		{"unknown key", upstream + "listeners: {bind_hots: 0.0.0.0}", "bind_hots"},
		{"unknown key in a list entry", upstream + "listeners: {brokers: [{node_id: 1, prot: 9201}]}", "prot"},
		{"unknown key in a virtual cluster's listeners", upstream + "virtual_clusters: [{name: a, listeners: {bootstrap_port: 9092, bind_hots: x}}]", "bind_hots"},
		{"unknown key in the SNI listener's tls", upstream + "listeners: {port_per_broker: false, sni: {port: 9093, bootstrap_host: b.example.com, broker_host_pattern: \"b-$(node_id).example.com\", tls: {cert_file: c, key_file: k, client_auht: require}}}", "client_auht"},
		{"wrong type", upstream + "listeners: {bootstrap_port: nine}", "/listeners/bootstrap_port"},
		{"list for a string", upstream + "admin: {listen: [127.0.0.1:9644]}", "/admin/listen"},
		{"bad enum", upstream + "log: {level: verbose}", "/log/level"},
		{"bad enum in a list", upstream + "listeners: {sasl: {mode: terminate, mechanisms: [scram-sha-512], users: [{name: a, credentials: [x]}]}}", "/listeners/sasl/mechanisms/0"},
		{"bad duration", upstream + "upstream: {dial_timeout: 10}", "/upstream/dial_timeout"},
		{"negative duration", upstream + "limits: {idle_timeout: -1s}", "/limits/idle_timeout"},
	} {
		body := tt.body
		if strings.Count(body, "upstream:") > 1 { // the case's own upstream
			body = strings.TrimPrefix(body, upstream)
			body = strings.Replace(body, "upstream: {", "upstream: {bootstrap_servers: [\"127.0.0.1:9092\"], ", 1)
		}
		if _, err := Parse(strings.NewReader(body)); err == nil {
			t.Errorf("%s: kproxy accepts\n%s", tt.name, body)
		}
		switch err := schema.Validate(yamlAsJSON(t, body)); {
		case err == nil:
			t.Errorf("%s: the schema accepts\n%s", tt.name, body)
		case !strings.Contains(err.Error(), tt.where):
			t.Errorf("%s: the schema refuses it, but not at %s: %v", tt.name, tt.where, err)
		}
	}
}
