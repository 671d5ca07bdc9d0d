package engine_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/bench/relaytest"
	"github.com/kproxy/kproxy/internal/testkit"
)

// TestUpstreamClosingAnIdlePairClosesTheClient: while nothing is owed the
// response loop waits on the upstream connection, so when the broker
// closes it (as Kafka does after connections.max.idle.ms) kproxy closes
// the client at once, before the client can send a request that would be
// lost, and counts it under its own reason.
func TestUpstreamClosingAnIdlePairClosesTheClient(t *testing.T) {
	be, err := relaytest.NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.Close)
	p := testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: []string{be.Addr()}}.YAML()})
	c := dialRaw(t, p.BootstrapAddr())
	req := kmsg.NewPtrApiVersionsRequest()
	if _, err := c.recv(req, c.send(req)); err != nil {
		t.Fatalf("ApiVersions through kproxy: %v", err)
	}

	be.Close() // closes the pair's upstream connection, idle
	c.expectClosed(5 * time.Second)
	if got := testkit.MetricValue(t, p.Registry, "kproxy_connections_closed_total", "reason", "upstream_closed_idle"); got != 1 {
		t.Errorf("kproxy_connections_closed_total{reason=upstream_closed_idle} = %v, want 1", got)
	}
}
