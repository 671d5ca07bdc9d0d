package config

import (
	"strings"
	"testing"
	"time"
)

// encryptionFile is a file with an encryption section of rules and more
// keys, for the loader's checks.
func encryptionFile(rules, more string) string {
	return `
upstream: {bootstrap_servers: ["127.0.0.1:9092"]}
encryption:
  kms: {aws_kms: {endpoint: "http://127.0.0.1:4599", region: eu-west-1}}
  topics:
` + rules + more
}

// TestEncryptionSectionChecks: each invalid key of the encryption section
// is refused at load, naming the key.
func TestEncryptionSectionChecks(t *testing.T) {
	for _, c := range []struct{ name, file, want string }{
		{"bad pattern", encryptionFile(`    - {match: "re:(", key: "alias/k"}`, ""), "encryption.topics[0].match"},
		{"unknown part", encryptionFile(`    - {match: "a", key: "alias/k", encrypt: [value, keys]}`, ""), `encryption.topics[0].encrypt: "keys"`},
		{"bad template", encryptionFile(`    - {match: "a", key: "alias/$(topc)"}`, ""), "encryption.topics[0].key"},
		{"records per DEK with headers", encryptionFile(`    - {match: "a", key: "alias/k", encrypt: [headers]}`, "\n  dek: {max_records: 300000000}"), "encryption.dek.max_records: 300000000"},
		{"records per DEK", encryptionFile(`    - {match: "a", key: "alias/k"}`, "\n  dek: {max_records: 5000000000}"), "dek.max_records"},
		{"short DEK age", encryptionFile(`    - {match: "a", key: "alias/k"}`, "\n  dek: {max_age: 10ms}"), "dek.max_age"},
		{"missing key policy", encryptionFile(`    - {match: "a", key: "alias/k"}`, "\n  on_missing_key: drop"), "encryption.on_missing_key"},
		{"no rules", encryptionFile(`    []`, ""), "encryption.topics"},
		{"remote plain http", strings.Replace(encryptionFile(`    - {match: "a", key: "alias/k"}`, ""), "http://127.0.0.1:4599", "http://kms.example.com", 1), "encryption.kms.aws_kms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.file))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one naming %s", err, c.want)
			}
		})
	}
}

// TestEncryptionDefaults: left out, encrypt is the value, DEKs last an
// hour or 5 million records, and a missing key is refused.
func TestEncryptionDefaults(t *testing.T) {
	cfg, err := Parse(strings.NewReader(encryptionFile(`    - {match: "a", key: "alias/k"}`, "")))
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Encryption
	if e == nil || e.DEK.MaxAge != time.Hour || e.DEK.MaxRecords != 5_000_000 || e.OnMissingKey != "reject" ||
		len(e.Topics) != 1 || strings.Join(e.Topics[0].Encrypt, ",") != "value" {
		t.Errorf("defaults %+v", e)
	}
}

// TestEncryptionKeysAcrossVirtualClusters: a template through which two
// virtual clusters' topics could reach one KMS key is refused at load,
// inherited or their own; one that starts with $(virtual_cluster)/ is not.
func TestEncryptionKeysAcrossVirtualClusters(t *testing.T) {
	file := func(top, own string) string {
		return `
upstream: {bootstrap_servers: ["127.0.0.1:9092"]}
encryption:
  kms: {aws_kms: {endpoint: "http://127.0.0.1:4599", region: eu-west-1}}
  topics: [{match: "*", key: "` + top + `"}]
virtual_clusters:
  - {name: a, topic_prefix: "a.", listeners: {bootstrap_port: 19092}}
  - name: b
    topic_prefix: "b."
    listeners: {bootstrap_port: 19192}
` + own
	}
	if _, err := Parse(strings.NewReader(file("alias/$(topic)", ""))); err == nil || !strings.Contains(err.Error(), "encryption.topics[0].key") {
		t.Errorf("shared key across virtual clusters: %v, want refused naming the key", err)
	}
	own := `    encryption:
      kms: {aws_kms: {endpoint: "http://127.0.0.1:4599", region: eu-west-1}}
      topics: [{match: "*", key: "alias/$(topic)"}]
`
	if _, err := Parse(strings.NewReader(file("alias/$(virtual_cluster)/$(topic)", own))); err == nil || !strings.Contains(err.Error(), "virtual_clusters[1].encryption.topics[0].key") {
		t.Errorf("a cluster's own template overlapping the inherited one: %v, want refused naming it", err)
	}
	if _, err := Parse(strings.NewReader(file("alias/$(virtual_cluster)/$(topic)", ""))); err != nil && strings.Contains(err.Error(), "encryption") {
		t.Errorf("per-cluster template refused: %v", err)
	}
}
