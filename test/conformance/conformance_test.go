package conformance

import (
	"testing"
)

// cellFn runs one client × scenario against one upstream.
type cellFn func(t *testing.T, c *cellCtx, e *env)

var cellFns = map[[2]string]cellFn{}

// register adds a cell; each client's file registers its scenarios.
func register(client, scenario string, fn cellFn) {
	cellFns[[2]string{client, scenario}] = fn
}

// runsAfter are the scenarios TestConformance leaves to tests of their
// own, run after it.
var runsAfter = map[string]bool{"rolling-restart": true, "quota-produce": true, "quota-fetch": true, "quota-principals": true}

// TestConformance runs every cell against kfake and, if configured, the
// real cluster (or against the upstreams KPROXY_CONFORMANCE_UPSTREAMS
// names). Cells run in parallel (go test -parallel bounds them); the quota
// cells (TestQuotas) and the rolling restart (TestRollingRestart) run
// afterwards.
func TestConformance(t *testing.T) {
	selected, err := selectedUpstreams()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range selected {
		t.Run(u, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, u)
			for _, client := range clients {
				for _, scenario := range scenarios {
					if runsAfter[scenario] {
						continue
					}
					fn := cellFns[[2]string{client, scenario}]
					runCell(t, u, client, scenario, true, func(t *testing.T, c *cellCtx) {
						if e.skip != "" {
							skipCell(t, c, e.skip)
						}
						if scenario == "sni" && e.sniSkip != "" {
							skipCell(t, c, e.sniSkip)
						}
						if isUpstreamSecurity(scenario) && e.upSkip != "" {
							skipCell(t, c, e.upSkip)
						}
						if fn == nil {
							t.Fatalf("no test for %s/%s", client, scenario)
						}
						fn(t, c, e)
					})
				}
			}
		})
	}
}
