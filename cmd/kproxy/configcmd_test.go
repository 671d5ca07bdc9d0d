package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestConfigDefaultsValidates: kproxy config defaults prints YAML that,
// with an upstream named, kproxy validate accepts.
func TestConfigDefaultsValidates(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := runArgs([]string{"config", "defaults"}, &stdout, &stderr); code != 0 {
		t.Fatalf("config defaults: exit %d: %s", code, stderr.String())
	}
	var parsed map[string]any
	if err := yaml.Unmarshal(stdout.Bytes(), &parsed); err != nil {
		t.Fatalf("config defaults is not YAML: %v", err)
	}
	if parsed["upstream"] == nil || parsed["listeners"] == nil || parsed["limits"] == nil {
		t.Errorf("config defaults lacks a main section: %v", parsed)
	}
	text := strings.Replace(stdout.String(), "  bootstrap_servers: []\n", "  bootstrap_servers: [\"127.0.0.1:9092\"]\n", 1)
	path := testkit.WriteConfig(t, text)
	stdout.Reset()
	if code := runArgs([]string{"validate", "--config", path}, &stdout, &stderr); code != 0 || !strings.HasSuffix(stdout.String(), ": ok\n") {
		t.Fatalf("validate of the defaults with an upstream: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

// TestConfigSchemaIsTheCheckedInOne: kproxy config schema prints JSON,
// the schema checked in as configs/kproxy.schema.json.
func TestConfigSchemaIsTheCheckedInOne(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := runArgs([]string{"config", "schema"}, &stdout, &stderr); code != 0 {
		t.Fatalf("config schema: exit %d: %s", code, stderr.String())
	}
	var schema map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &schema); err != nil {
		t.Fatalf("config schema is not JSON: %v", err)
	}
	if schema["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema is %v", schema["$schema"])
	}
	checkedIn, err := os.ReadFile("../../configs/kproxy.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stdout.Bytes(), checkedIn) {
		t.Errorf("kproxy config schema differs from configs/kproxy.schema.json; regenerate it: go test ./internal/config -run TestSchemaFile -update")
	}
}

// TestConfigCommandUsage: kproxy config without a known subcommand is bad
// usage, saying what is known.
func TestConfigCommandUsage(t *testing.T) {
	for _, args := range [][]string{{"config"}, {"config", "default"}, {"config", "schema", "extra"}} {
		var stdout, stderr bytes.Buffer
		if code := runArgs(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "schema") || stdout.Len() > 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 naming schema and defaults", args, code, stdout.String(), stderr.String())
		}
	}
}
