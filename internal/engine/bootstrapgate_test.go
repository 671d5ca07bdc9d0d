package engine

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// gateServer starts a Server whose bootstrap servers are servers, logging
// to logs and registering its metrics with reg.
func gateServer(t *testing.T, logs *logbuf.Buffer, reg *prometheus.Registry, servers ...string) *Server {
	t.Helper()
	quoted := make([]string, len(servers))
	for i, s := range servers {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	return startServer(t, fmt.Sprintf(`
upstream: {bootstrap_servers: [%s], reconnect_backoff: 50ms, reconnect_backoff_max: 200ms}
listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0}
`, strings.Join(quoted, ", ")), zerolog.New(logs), reg)
}

// unreachableGate is a gateServer whose only bootstrap server, upstream,
// nothing listens on yet, returned once its bootstrap port refuses
// connections.
func unreachableGate(t *testing.T) (s *Server, logs *logbuf.Buffer, reg *prometheus.Registry, upstream string) {
	t.Helper()
	logs, reg, upstream = &logbuf.Buffer{}, prometheus.NewRegistry(), closedPort(t)
	s = gateServer(t, logs, reg, upstream)
	waitRefused(t, s.BootstrapAddr(), true, "bootstrap port still accepts with the only bootstrap server unreachable")
	return s, logs, reg, upstream
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func refused(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// waitRefused waits up to 5 seconds until connecting to addr is refused
// (want true) or accepted (want false).
func waitRefused(t *testing.T, addr string, want bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); refused(addr) != want; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("within 5s: %s", what)
		}
	}
}

func countMessages(t *testing.T, logs *logbuf.Buffer, prefix string) []map[string]any {
	var out []map[string]any
	for _, l := range logs.Lines(t) {
		if m, _ := l["message"].(string); strings.HasPrefix(m, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// While the only bootstrap server is unreachable the bootstrap port
// refuses connections, with one warning that says why; once the server
// answers, it accepts again on the same port, and says so once.
func TestBootstrapListenerFollowsUpstream(t *testing.T) {
	s, logs, reg, upstream := unreachableGate(t)
	addr := s.BootstrapAddr()
	time.Sleep(500 * time.Millisecond) // several failed probes
	for i := range 3 {
		if !refused(addr) {
			t.Fatalf("connect %d accepted while the bootstrap server is unreachable", i+1)
		}
	}
	if v := admissionMetric(t, reg, "kproxy_bootstrap_listener_open"); v != 0 {
		t.Errorf("kproxy_bootstrap_listener_open = %v while refusing, want 0", v)
	}
	closedLines := countMessages(t, logs, "bootstrap listener refuses connections")
	if len(closedLines) != 1 || closedLines[0]["level"] != "warn" || closedLines[0]["addr"] != addr {
		t.Fatalf("refusal logged as %v, want one warning naming %s", closedLines, addr)
	}

	ln, err := net.Listen("tcp", upstream)
	if err != nil {
		t.Skipf("the upstream's port was taken meanwhile: %v", err)
	}
	defer ln.Close()
	go acceptAndClose(ln)
	waitRefused(t, addr, false, "bootstrap port still refuses with the bootstrap server back")
	if n := len(countMessages(t, logs, "bootstrap listener accepting again")); n != 1 {
		t.Errorf("%d lines saying the bootstrap listener accepts again, want 1", n)
	}
	if v := admissionMetric(t, reg, "kproxy_bootstrap_listener_open"); v != 1 {
		t.Errorf("kproxy_bootstrap_listener_open = %v once accepting again, want 1", v)
	}
	if s.BootstrapAddr() != addr {
		t.Errorf("bootstrap listener reopened on %s, want %s", s.BootstrapAddr(), addr)
	}
}

// One reachable bootstrap server is enough: the port stays open while
// another one is down.
func TestBootstrapListenerOpenWhileOneServerAnswers(t *testing.T) {
	var logs logbuf.Buffer
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	go acceptAndClose(up)
	down := closedPort(t)
	s := gateServer(t, &logs, prometheus.NewRegistry(), down, up.Addr().String())
	for deadline := time.Now().Add(5 * time.Second); !s.health.down(down); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the unreachable bootstrap server %s never known down", down)
		}
	}
	if refused(s.BootstrapAddr()) {
		t.Fatal("bootstrap port refuses while one bootstrap server answers")
	}
	if n := len(countMessages(t, &logs, "bootstrap listener refuses connections")); n != 0 {
		t.Errorf("%d lines saying the bootstrap listener refuses, want none", n)
	}
}

// acceptAndClose serves ln by closing every connection it accepts.
func acceptAndClose(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

// waitMessage waits up to 5 seconds for a log line starting with prefix.
func waitMessage(t *testing.T, logs *logbuf.Buffer, prefix string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); len(countMessages(t, logs, prefix)) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line %q within 5s:\n%s", prefix, logs.String())
		}
	}
}

// While the bootstrap listener is closed its port is free: if another
// process takes it, the reopen fails, is logged, and is retried until the
// port is free again.
func TestBootstrapListenerReopenRetriedWhilePortTaken(t *testing.T) {
	s, logs, reg, upstream := unreachableGate(t)
	addr := s.BootstrapAddr()
	thief, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	up, err := net.Listen("tcp", upstream)
	if err != nil {
		thief.Close()
		t.Skipf("the upstream's port was taken meanwhile: %v", err)
	}
	defer up.Close()
	go acceptAndClose(up)
	waitMessage(t, logs, "bootstrap listener not reopened; retrying")
	if v := admissionMetric(t, reg, "kproxy_bootstrap_listener_open"); v != 0 {
		t.Errorf("kproxy_bootstrap_listener_open = %v while its port is taken, want 0", v)
	}
	thief.Close()
	waitMessage(t, logs, "bootstrap listener accepting again")
	if refused(addr) {
		t.Fatal("bootstrap port refuses after the reopen")
	}
}
