package policy

import (
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/config"
)

// parsePolicy parses a policy section (YAML under "policy:") through the
// real config loader, so tests see exactly what kproxy would.
func parsePolicy(t testing.TB, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader("upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\n" + yaml))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	if cfg.Policy == nil {
		t.Fatal("no policy section")
	}
	return cfg
}

func compilePolicy(t testing.TB, yaml string) *Engine {
	t.Helper()
	e, err := Compile(*parsePolicy(t, yaml).Policy)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
