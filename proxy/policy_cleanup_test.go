package proxy

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/config"
)

// buildClusterFilters returns, rather than panics on, an error met after
// its wiring began: its clean-up must close the wiring it built, not the
// nil result. Run's file checks now find an audit.output that cannot be
// opened first, so this calls buildClusterFilters itself, as for an
// output that became unwritable between the check and the open.
func TestStartPolicyErrorIsReturnedNotAPanic(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent", "audit.log")
	for name, text := range map[string]string{
		"policy":          "policy: {default: allow}\n",
		"virtual cluster": "policy: {default: allow}\nvirtual_clusters:\n  - {name: a, topic_prefix: a., group_prefix: a., transactional_id_prefix: a., listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0}}\n",
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := config.Parse(strings.NewReader(fmt.Sprintf(
				"upstream: {bootstrap_servers: [\"127.0.0.1:1\"]}\naudit: {output: %q}\n%s", missing, text)))
			if err != nil {
				t.Fatal(err)
			}
			var w *clusterFilters
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("buildClusterFilters panicked: %v", p)
					}
				}()
				w, err = buildClusterFilters(cfg, nil, zerolog.Nop(), prometheus.NewRegistry())
			}()
			if err == nil || !strings.Contains(err.Error(), "audit.output") || !strings.Contains(err.Error(), missing) {
				if w != nil {
					w.close()
				}
				t.Fatalf("buildClusterFilters returned %v, want an error naming audit.output and %s", err, missing)
			}
		})
	}
}
