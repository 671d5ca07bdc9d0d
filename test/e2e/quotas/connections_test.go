package e2equotas

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit"
)

// connectionsPolicy: a connection creation rate for one client id and a
// connection count for another; 100 ms windows, so that the first burst
// the rate allows (rate × (samples-1) windows) is 5 connections.
const connectionsPolicy = `
policy:
  default: allow
  quota_windows: {samples: 11, size: 100ms}
  quotas:
    - {name: conn-rate, principals: ["client_id:conn-rate"], connection_creation_rate: 5}
    - {name: conn-max, principals: ["client_id:conn-max"], max_connections: 3}
`

// answers reports whether a new connection with clientID is served: its
// ApiVersions answered (true), or the connection closed (false, with how
// long after the request it closed).
func answers(t *testing.T, addr, clientID string) (bool, time.Duration, *testkit.RawConn) {
	t.Helper()
	c := testkit.DialRaw(t, addr, clientID)
	start := time.Now()
	_, err := c.APIVersions()
	if err == nil {
		return true, 0, c
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !testkit.IsClosedErr(err) {
		t.Fatalf("ApiVersions on a new connection: %v, want an answer or the connection closed", err)
	}
	return false, time.Since(start), c
}

// TestConnectionCreationRate: connections beyond the rate are refused as
// Kafka refuses those over an IP's rate: closed once the throttle time
// (at most one window) is over, and not counted; once the windows have
// passed, new connections are served again.
func TestConnectionCreationRate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, connectionsPolicy)
	served, refused := 0, 0
	for i := 0; i < 12; i++ {
		ok, after, c := answers(t, e.proxy.BootstrapAddr(), "conn-rate")
		c.Close()
		if ok {
			served++
			continue
		}
		refused++
		if after < 90*time.Millisecond {
			t.Errorf("refused connection closed %v after its request, want after the throttle time (100 ms here)", after)
		}
	}
	// 5 at once, and one more per 200 ms while refusing.
	if served < 5 || served > 8 || refused == 0 {
		t.Errorf("of 12 connections at once, %d served and %d refused; want 5 to 8 served at 5/s", served, refused)
	}
	if n := testkit.MetricValue(t, e.reg, "kproxy_quota_connections_refused_total", "quota", "conn-rate", "reason", "connection_creation_rate"); n != float64(refused) {
		t.Errorf("refused connections metric %v, want %d", n, refused)
	}
	time.Sleep(1200 * time.Millisecond) // past every window
	if ok, _, c := answers(t, e.proxy.BootstrapAddr(), "conn-rate"); !ok {
		t.Error("a new connection after the windows passed was refused")
	} else {
		c.Close()
	}
	// Another client id is not under the rule.
	for i := 0; i < 8; i++ {
		if ok, _, c := answers(t, e.proxy.BootstrapAddr(), "other"); !ok {
			t.Fatal("a connection no rule limits was refused")
		} else {
			c.Close()
		}
	}
}

// TestMaxConnections: a principal's connections beyond max_connections
// are closed; once one of its connections closes, a new one is served.
func TestMaxConnections(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, connectionsPolicy)
	addr := e.proxy.BootstrapAddr()
	var open []*testkit.RawConn
	for i := 0; i < 3; i++ {
		ok, _, c := answers(t, addr, "conn-max")
		if !ok {
			t.Fatalf("connection %d of 3 allowed was refused", i+1)
		}
		open = append(open, c)
	}
	if ok, _, c := answers(t, addr, "conn-max"); ok {
		t.Fatal("a fourth connection was served over max_connections 3")
	} else {
		c.Close()
	}
	if n := testkit.MetricValue(t, e.reg, "kproxy_quota_connections", "quota", "conn-max"); n != 3 {
		t.Errorf("kproxy_quota_connections %v, want 3", n)
	}
	open[0].Close()
	if !testkit.WaitFor(5*time.Second, func() bool {
		return testkit.MetricValue(t, e.reg, "kproxy_quota_connections", "quota", "conn-max") == 2
	}) {
		t.Fatal("a closed connection still counts against max_connections")
	}
	if ok, _, c := answers(t, addr, "conn-max"); !ok {
		t.Error("a connection after one closed was refused")
	} else {
		c.Close()
	}
	for _, c := range open[1:] {
		if _, err := c.APIVersions(); err != nil {
			t.Errorf("a connection within the limit stopped being served: %v", err)
		}
		c.Close()
	}
}
