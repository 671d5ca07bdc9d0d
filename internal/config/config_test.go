package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseAppliesDefaults(t *testing.T) {
	cfg, err := Parse(strings.NewReader(`upstream: {bootstrap_servers: ["127.0.0.1:9092"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listeners.BindHost != "127.0.0.1" || cfg.Listeners.AdvertisedHost != "127.0.0.1" {
		t.Errorf("listeners = %+v, want bind and advertised 127.0.0.1", cfg.Listeners)
	}
	if cfg.Limits.MaxBufferedBytes != 128<<20 {
		t.Errorf("limits.max_buffered_bytes default = %d, want 128 MiB", cfg.Limits.MaxBufferedBytes)
	}
	if cfg.Limits.MaxFrameBytes != 100<<20 || cfg.Limits.IdleTimeout != 10*time.Minute ||
		cfg.Limits.MaxInFlight != 1000 || cfg.Upstream.DialTimeout != 10*time.Second {
		t.Errorf("limits = %+v, dial timeout %s: not the documented defaults", cfg.Limits, cfg.Upstream.DialTimeout)
	}
	if cfg.Upstream.ReconnectBackoff != 100*time.Millisecond || cfg.Upstream.ReconnectBackoffMax != 2*time.Second {
		t.Errorf("reconnect backoff %s..%s: not the documented 100ms..2s", cfg.Upstream.ReconnectBackoff, cfg.Upstream.ReconnectBackoffMax)
	}
	if cfg.Log.Level != "info" || cfg.Log.Format != "json" {
		t.Errorf("log = %+v", cfg.Log)
	}
}

func TestParseDurationsAndOverrides(t *testing.T) {
	cfg, err := Parse(strings.NewReader(`
upstream: {bootstrap_servers: ["a:1", "b:2"], dial_timeout: 3s}
listeners:
  bind_host: 0.0.0.0
  advertised_host: kafka.example.com
  bootstrap_port: 9092
  broker_port_base: 9100
  brokers: [{node_id: 1001, port: 9201, advertised_host: b1.example.com}]
limits: {idle_timeout: 90s}
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Upstream.DialTimeout != 3*time.Second || cfg.Limits.IdleTimeout != 90*time.Second {
		t.Errorf("durations not parsed: dial %s idle %s", cfg.Upstream.DialTimeout, cfg.Limits.IdleTimeout)
	}
	if len(cfg.Listeners.Brokers) != 1 || cfg.Listeners.Brokers[0].Port != 9201 || cfg.Listeners.Brokers[0].AdvertisedHost != "b1.example.com" {
		t.Errorf("broker overrides = %+v", cfg.Listeners.Brokers)
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name, yaml string
		wantKey    string
	}{
		{"unknown top-level key", "upstream: {bootstrap_servers: [\"a:1\"]}\nlistener: {}", `unknown key "listener"`},
		{"unknown nested key", "upstream: {bootstrap_server: [\"a:1\"]}", `unknown key "bootstrap_server"`},
		{"no upstream", "listeners: {bind_host: 127.0.0.1}", "upstream:"},
		{"both upstreams", "upstream: {bootstrap_servers: [\"a:1\"], embedded: {brokers: 1}}", "exclusive"},
		{"bad bootstrap server", "upstream: {bootstrap_servers: [\"nohost\"]}", "upstream.bootstrap_servers[0]"},
		{"wildcard without advertised host", "upstream: {bootstrap_servers: [\"a:1\"]}\nlisteners: {bind_host: 0.0.0.0}", "listeners.advertised_host"},
		{"bad port", "upstream: {bootstrap_servers: [\"a:1\"]}\nlisteners: {bootstrap_port: 70000}", "listeners.bootstrap_port"},
		{"duplicate node override", "upstream: {bootstrap_servers: [\"a:1\"]}\nlisteners: {brokers: [{node_id: 1}, {node_id: 1}]}", "listeners.brokers[1].node_id"},
		{"bad log level", "upstream: {bootstrap_servers: [\"a:1\"]}\nlog: {level: loud}", "log.level"},
		{"bad log format", "upstream: {bootstrap_servers: [\"a:1\"]}\nlog: {format: xml}", "log.format"},
		{"negative log sample", "upstream: {bootstrap_servers: [\"a:1\"]}\nlog: {sample: -1s}", "log.sample"},
		{"principal limit too high", "upstream: {bootstrap_servers: [\"a:1\"]}\nmetrics: {principal_limit: 10001}", "metrics.principal_limit"},
		{"negative principal limit", "upstream: {bootstrap_servers: [\"a:1\"]}\nmetrics: {principal_limit: -1}", "metrics.principal_limit"},
		{"tiny frame limit", "upstream: {bootstrap_servers: [\"a:1\"]}\nlimits: {max_frame_bytes: 10}", "limits.max_frame_bytes"},
		{"buffer bound below frame limit", "upstream: {bootstrap_servers: [\"a:1\"]}\nlimits: {max_frame_bytes: 2097152, max_buffered_bytes: 1048576}", "limits.max_buffered_bytes"},
		{"bad embedded brokers", "upstream: {embedded: {brokers: 99}}", "upstream.embedded.brokers"},
		{"bad admin listen", "upstream: {bootstrap_servers: [\"a:1\"]}\nadmin: {listen: nope}", "admin.listen"},
		{"bad duration", "upstream: {bootstrap_servers: [\"a:1\"], dial_timeout: soon}", "soon"},
		{"negative reconnect backoff", "upstream: {bootstrap_servers: [\"a:1\"], reconnect_backoff: -1s}", "upstream.reconnect_backoff"},
		{"backoff max under backoff", "upstream: {bootstrap_servers: [\"a:1\"], reconnect_backoff: 1s, reconnect_backoff_max: 500ms}", "upstream.reconnect_backoff_max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.yaml))
			if err == nil {
				t.Fatal("accepted an invalid configuration")
			}
			if !strings.Contains(err.Error(), tt.wantKey) {
				t.Errorf("error %q does not name %q", err, tt.wantKey)
			}
		})
	}
}

func TestExampleConfigsAreValid(t *testing.T) {
	for _, path := range []string{"../../configs/demo.yaml", "../../configs/example.yaml"} {
		if _, err := Load(path); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// TestReconnectBackoffMaxFollowsBackoff: a reconnect_backoff above the
// default maximum raises the defaulted maximum instead of being refused.
func TestReconnectBackoffMaxFollowsBackoff(t *testing.T) {
	cfg, err := Parse(strings.NewReader(`upstream: {bootstrap_servers: ["a:1"], reconnect_backoff: 5s}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Upstream.ReconnectBackoffMax != 5*time.Second {
		t.Errorf("reconnect_backoff_max %s, want 5s (at least reconnect_backoff)", cfg.Upstream.ReconnectBackoffMax)
	}
}

func TestBrokerPortMap(t *testing.T) {
	l := Listeners{BrokerPortBase: 9100, Brokers: []BrokerOverride{
		{NodeID: 7, Port: 9207},
		{NodeID: 8, AdvertisedHost: "b8.example.com"}, // host only: the port stays base + id
	}}
	for id, want := range map[int32]int{0: 9100, 3: 9103, 7: 9207, 8: 9108, 1001: 10101} {
		if got := l.BrokerPort(id); got != want {
			t.Errorf("BrokerPort(%d) = %d, want %d", id, got, want)
		}
	}
	if got := (Listeners{}).BrokerPort(3); got != 0 {
		t.Errorf("base 0: BrokerPort = %d, want 0 (any free port)", got)
	}
}
