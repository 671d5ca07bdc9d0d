package config

import (
	"strings"
	"testing"
)

func TestMaxHandshakes(t *testing.T) {
	const base = "upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\nlisteners: {bootstrap_port: 9092}\n"
	cfg, err := Parse(strings.NewReader(base))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Limits.HandshakeLimit(); got != DefaultMaxHandshakes {
		t.Errorf("limits.max_handshakes unset: %d, want the default %d", got, DefaultMaxHandshakes)
	}
	cfg, err = Parse(strings.NewReader(base + "limits: {max_handshakes: 50}\n"))
	if err != nil || cfg.Limits.HandshakeLimit() != 50 {
		t.Fatalf("limits.max_handshakes: 50 gave %v, %v", cfg, err)
	}
	_, err = Parse(strings.NewReader(base + "limits: {max_handshakes: -1}\n"))
	if err == nil || !strings.Contains(err.Error(), "limits.max_handshakes: -1: must be 1 or more") {
		t.Fatalf("limits.max_handshakes: -1 gave %v; want an error naming the key and what is valid", err)
	}
}
