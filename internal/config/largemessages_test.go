package config

import (
	"strings"
	"testing"
)

// The large_messages section is checked at load, each problem naming its
// key, at the top level and in a virtual cluster; the contract's example
// loads as it is.
func TestLargeMessagesSectionValidated(t *testing.T) {
	const good = `
large_messages:
  store:
    s3: {endpoint: "http://127.0.0.1:8333", bucket: kafka-large, region: eu-west-1, path_style: true}
  topics:
    - match: "media.*"
      threshold_bytes: 1048576
      header_trigger: LFS_BLOB
  resolve_on_fetch: true
  pointer_format: kafscale
  max_object_bytes: 5368709120
`
	head := "upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\n"
	cfg, err := Parse(strings.NewReader(head + good))
	if err != nil {
		t.Fatalf("the documented section: %v", err)
	}
	if lm := cfg.LargeMessages; lm == nil || lm.Store.S3.Bucket != "kafka-large" || !lm.Resolves() || lm.Topics[0].ThresholdBytes != 1<<20 {
		t.Fatalf("decoded %+v", cfg.LargeMessages)
	}
	for _, c := range []struct{ edit, want string }{
		{`pointer_format: kafscale`, `pointer_format: other`},
		{`max_object_bytes: 5368709120`, `max_object_bytes: -1`},
		{`threshold_bytes: 1048576`, `threshold_bytes: -5`},
		{`match: "media.*"`, `match: "re:("`},
		{`bucket: kafka-large, `, ``},
		{`endpoint: "http://127.0.0.1:8333"`, `endpoint: "http://s3.example.com"`},
	} {
		bad := strings.Replace(good, c.edit, c.want, 1)
		_, err := Parse(strings.NewReader(head + bad))
		key := map[string]string{`pointer_format: other`: "large_messages.pointer_format", `max_object_bytes: -1`: "large_messages.max_object_bytes",
			`threshold_bytes: -5`: "large_messages.topics[0].threshold_bytes", `match: "re:("`: "large_messages.topics[0].match",
			``: "store.s3.bucket", `endpoint: "http://s3.example.com"`: "store.s3.endpoint"}[c.want]
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%q: %v, want an error naming %s", c.want, err, key)
		}
	}
	vc := head + `virtual_clusters:
  - name: a
    topic_prefix: "a."
    listeners: {bootstrap_port: 19092}
` + strings.ReplaceAll(strings.Replace(good, "pointer_format: kafscale", "pointer_format: json", 1), "\n", "\n    ")
	if _, err := Parse(strings.NewReader(vc)); err == nil || !strings.Contains(err.Error(), "virtual_clusters[0].large_messages.pointer_format") {
		t.Errorf("a virtual cluster's section: %v, want an error naming virtual_clusters[0].large_messages.pointer_format", err)
	}
	if _, err := Parse(strings.NewReader(head + "large_messages: {store: {s3: {bucket: b, region: r}}}\n")); err == nil || !strings.Contains(err.Error(), "large_messages.topics") {
		t.Errorf("no topic rules: %v, want an error naming large_messages.topics", err)
	}
}
