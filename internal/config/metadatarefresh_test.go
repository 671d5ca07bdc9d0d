package config

import (
	"strings"
	"testing"
	"time"
)

func TestMetadataRefreshKey(t *testing.T) {
	for yaml, want := range map[string]time.Duration{
		`upstream: {bootstrap_servers: ["a:1"]}`:                       DefaultMetadataRefresh,
		`upstream: {bootstrap_servers: ["a:1"], metadata_refresh: 5s}`: 5 * time.Second,
	} {
		cfg, err := Parse(strings.NewReader(yaml))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Upstream.MetadataRefresh != want {
			t.Errorf("%s: upstream.metadata_refresh %s, want %s", yaml, cfg.Upstream.MetadataRefresh, want)
		}
	}
	_, err := Parse(strings.NewReader(`upstream: {bootstrap_servers: ["a:1"], metadata_refresh: -1s}`))
	if err == nil || !strings.Contains(err.Error(), "upstream.metadata_refresh: -1s: must be positive") {
		t.Errorf("negative metadata_refresh: %v", err)
	}
}
