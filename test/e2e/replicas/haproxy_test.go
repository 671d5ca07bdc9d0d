package e2ereplicas

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestReplicasBehindHAProxy: kcat and franz-go produce and consume with a
// group through HAProxy; one replica is SIGKILLed and another drained
// mid-stream; every acknowledged record is consumed, and the replicas'
// logs and audit name the clients, never the balancer.
func TestReplicasBehindHAProxy(t *testing.T) {
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy is not installed (apt-get install -y haproxy; .ci/run installs it): skipping the replicas-behind-HAProxy test")
	}
	started := time.Now()
	cluster := testkit.Cluster(t, nodes, kfake.SeedTopics(3, "ha.franz", "ha.kcat"))
	p, dir := freePorts(t), t.TempDir()
	replicas := startReplicas(t, testkit.SharedKproxy(t), cluster, p, dir)
	seed := startHAProxy(t, haproxy, p, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()

	kcatRoundTrip(t, ctx, seed)

	s := startStream(t, ctx, seed, "ha.franz")
	time.Sleep(4 * time.Second)
	for _, r := range replicas[1:] {
		if n := r.clientConns(); n == 0 {
			t.Errorf("replica %s served no franz-go connection before it is stopped: stopping it would test nothing", r.ip)
		} else {
			t.Logf("replica %s has served %d franz-go connections", r.ip, n)
		}
	}
	killed := replicas[1]
	killAt := time.Now()
	killed.bin.Cmd.Process.Signal(syscall.SIGKILL)
	<-killed.done
	killed.bin.Cmd.Wait()
	t.Logf("SIGKILL %s", killed.ip)

	time.Sleep(6 * time.Second)
	drained := replicas[2]
	drainAt := time.Now()
	drained.bin.Cmd.Process.Signal(syscall.SIGTERM)
	<-drained.done
	drainErr := drained.bin.Cmd.Wait()
	drainTook := time.Since(drainAt)
	t.Logf("SIGTERM %s: exited after %s (%v)", drained.ip, drainTook.Round(time.Millisecond), drainErr)
	if drainErr != nil {
		t.Errorf("the drained replica exited with %v, want 0", drainErr)
	}

	time.Sleep(4 * time.Second)
	s.finish(ctx, 60*time.Second)

	lost := s.missing()
	s.mu.Lock()
	nAcked, nConsumed, failures := len(s.acked), len(s.consumed), s.failures
	s.mu.Unlock()
	t.Logf("records: %d acked, %d consumed, %d not acked (producer errors), %d acked but not consumed", nAcked, nConsumed, len(failures), lost)
	acks, consumption := s.pauses(killAt, 5*time.Second)
	t.Logf("after SIGKILL of %s: longest pause in acks %s, in consumption %s (within 5s of the kill)", killed.ip, acks, consumption)
	acks, consumption = s.pauses(drainAt, 4*time.Second)
	t.Logf("after SIGTERM of %s: longest pause in acks %s, in consumption %s (within 4s of the signal); drain took %s",
		drained.ip, acks, consumption, drainTook.Round(time.Millisecond))
	if lost > 0 {
		s.explainMissing()
		t.Errorf("%d acknowledged records were never consumed", lost)
	}
	if nAcked < 1000 {
		t.Errorf("only %d records acknowledged in ~14s of producing", nAcked)
	}
	if len(failures) > 0 {
		t.Errorf("%d records failed to produce, first: %v", len(failures), failures[0])
	}

	checkClientAddresses(t, replicas)
	t.Logf("test took %s", time.Since(started).Round(time.Second))
}

// kcatRoundTrip produces with kcat through the balancer and consumes the
// same records back with a kcat group consumer.
func kcatRoundTrip(t *testing.T, ctx context.Context, seed string) {
	t.Helper()
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Log("kcat is not installed: skipping the kcat part")
		return
	}
	const n = 200
	var in bytes.Buffer
	for i := range n {
		fmt.Fprintf(&in, "k%03d\n", i)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	prod := exec.CommandContext(cctx, kcat, "-b", seed, "-P", "-t", "ha.kcat", "-X", "acks=all")
	prod.Stdin = &in
	if out, err := prod.CombinedOutput(); err != nil {
		t.Fatalf("kcat produce: %v\n%s", err, out)
	}
	cons := exec.CommandContext(cctx, kcat, "-b", seed, "-G", "ha.kcat.g", "-X", "auto.offset.reset=earliest", "-c", strconv.Itoa(n), "-f", "%s\n", "-q", "ha.kcat")
	out, err := cons.Output()
	if err != nil {
		t.Fatalf("kcat group consume: %v (got %d lines)", err, strings.Count(string(out), "\n"))
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		seen[sc.Text()] = true
	}
	if len(seen) != n {
		t.Fatalf("kcat consumed %d distinct records of %d produced", len(seen), n)
	}
	t.Logf("kcat: %d records produced and consumed with a group through HAProxy", n)
}

// checkClientAddresses: the replicas' logs and audit lines name the
// clients' own addresses (franz-go from 127.0.0.50, kcat from 127.0.0.1),
// never the balancer's.
func checkClientAddresses(t *testing.T, replicas []*replica) {
	t.Helper()
	clients, auditClients := map[string]int{}, 0
	for _, r := range replicas {
		for _, l := range r.logLines() {
			for _, key := range []string{"client", "peer"} {
				addr, _ := l[key].(string)
				if addr == "" {
					continue
				}
				host, _, _ := net.SplitHostPort(addr)
				if host == balancer && key == "client" {
					t.Errorf("replica %s logged the balancer as the client: %v", r.ip, l)
				}
				if key == "peer" {
					t.Errorf("replica %s refused a connection from %s: %v", r.ip, addr, l)
				}
				clients[host]++
			}
		}
		audit, err := os.ReadFile(r.audit) // the killed replica's may have lost its buffered tail
		if err != nil && !os.IsNotExist(err) {
			t.Errorf("replica %s audit log: %v", r.ip, err)
		}
		if strings.Contains(string(audit), `"client":"`+balancer) {
			t.Errorf("replica %s's audit names the balancer %s as a client", r.ip, balancer)
		}
		auditClients += strings.Count(string(audit), `"client":"`+clientIP)
	}
	if auditClients == 0 {
		t.Errorf("no audit line names the franz-go clients' address %s", clientIP)
	}
	if clients[clientIP] == 0 {
		t.Errorf("no log line names the franz-go clients' address %s; clients seen: %v", clientIP, clients)
	}
	t.Logf("client addresses in the replicas' logs (lines): %v; audit lines naming %s: %d", clients, clientIP, auditClients)
}
