package proxy_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/proxy"
)

// TestStartupErrorsWithAPolicyAreReturned: with a policy configured, an
// upstream CA bundle that is missing or an audit file that cannot be
// opened is returned as an error naming its cause, never a panic. (Run's
// file checks find both before the policy's wiring begins;
// TestStartPolicyErrorIsReturnedNotAPanic holds the wiring's clean-up.)
func TestStartupErrorsWithAPolicyAreReturned(t *testing.T) {
	cluster := testkit.Cluster(t, 1)
	missing := filepath.Join(t.TempDir(), "absent", "file.pem")
	upstream := fmt.Sprintf("upstream: {bootstrap_servers: [%q]}\n", cluster.ListenAddrs()[0])
	rest := `listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0}
log: {level: info, format: json}
policy: {default: allow}
`
	for name, text := range map[string]string{
		"missing upstream CA":     fmt.Sprintf("upstream: {bootstrap_servers: [%q], tls: {ca_file: %q}}\n", cluster.ListenAddrs()[0], missing) + rest,
		"unwritable audit output": upstream + rest + fmt.Sprintf("audit: {output: %q}\n", missing),
	} {
		t.Run(name, func(t *testing.T) {
			path := testkit.WriteConfig(t, text)
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("proxy.Run panicked: %v", p)
					}
				}()
				err = proxy.Run(context.Background(), proxy.Options{ConfigPath: path, LogOutput: io.Discard})
			}()
			if err == nil || !strings.Contains(err.Error(), missing) {
				t.Errorf("proxy.Run returned %v, want an error naming %s", err, missing)
			}
		})
	}
}

// TestBrokerPortInUseFailsStartUp: a broker listener whose port is taken
// ends Run with an error naming the address, as a broker whose port is
// taken exits, instead of retrying the metadata forever.
func TestBrokerPortInUseFailsStartUp(t *testing.T) {
	cluster := testkit.Cluster(t, 1) // node 0
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	text := strings.Replace(testkit.LocalConfig(cluster.ListenAddrs()[0]), "broker_port_base: 0", fmt.Sprintf("broker_port_base: %d", port), 1)
	done := make(chan error, 1)
	go func() {
		done <- proxy.Run(context.Background(), proxy.Options{ConfigPath: testkit.WriteConfig(t, text), LogOutput: io.Discard})
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), taken.Addr().String()) || !strings.Contains(err.Error(), "address already in use") {
			t.Errorf("proxy.Run returned %v, want the bind error for %s", err, taken.Addr())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("proxy.Run still running 30s after its broker port was found taken")
	}
}

// TestConsoleLogHasNoColoursOutsideATerminal: log.format console writes
// plain text to a file or pipe; escape codes are for a terminal.
func TestConsoleLogHasNoColoursOutsideATerminal(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	text := fmt.Sprintf("upstream: {bootstrap_servers: [\"127.0.0.1:1\"]}\nlog: {format: console}\nlisteners: {bind_host: 127.0.0.1, bootstrap_port: %d}\n",
		taken.Addr().(*net.TCPAddr).Port)
	var log strings.Builder
	if err := proxy.Run(context.Background(), proxy.Options{ConfigPath: testkit.WriteConfig(t, text), LogOutput: &log}); err == nil {
		t.Fatal("proxy.Run bound a port that is taken")
	}
	if !strings.Contains(log.String(), "kproxy stopped") || strings.Contains(log.String(), "\x1b[") {
		t.Errorf("console log %q: want the stop line without escape codes", log.String())
	}
}
