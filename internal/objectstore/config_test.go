package objectstore

import (
	"strings"
	"testing"
)

func TestConfigValidateNamesTheKey(t *testing.T) {
	ok := Config{Bucket: "b", Region: "eu-west-1"}
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no bucket", func(c *Config) { c.Bucket = "" }, "large_messages.store.s3.bucket"},
		{"no region", func(c *Config) { c.Region = "" }, "large_messages.store.s3.region"},
		{"small part", func(c *Config) { c.PartSize = 1 << 20 }, "large_messages.store.s3.part_size"},
		{"http to a remote host", func(c *Config) { c.Endpoint = "http://s3.example.com" }, "http only towards a loopback"},
		{"other scheme", func(c *Config) { c.Endpoint = "ftp://127.0.0.1" }, "scheme must be https"},
		{"relative URL", func(c *Config) { c.Endpoint = "s3.example.com" }, "not an absolute URL"},
	} {
		cfg := ok
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate = %v, want an error naming %q", c.name, err, c.want)
		}
	}
	for _, endpoint := range []string{"", "https://s3.eu-west-1.amazonaws.com", "http://127.0.0.1:8333", "http://[::1]:8333"} {
		cfg := ok
		cfg.Endpoint = endpoint
		if err := cfg.Validate(); err != nil {
			t.Errorf("endpoint %q: %v", endpoint, err)
		}
	}
}
