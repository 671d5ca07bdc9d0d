// Package e2ereplicas runs kproxy as it is deployed to scale out: three
// replicas of the real binary with one configuration, each on its own
// loopback address and the same ports, behind a real HAProxy in TCP mode
// (round robin per connection, PROXY protocol v2), in front of one kfake
// cluster. The configurations are deploy/haproxy's, which deploy/haproxy/
// run.sh uses too.
package e2ereplicas

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

const (
	balancer = "127.0.0.10"
	// clientIP is where the franz-go clients connect from: neither the
	// balancer's nor kproxy's address, so logs can tell them apart.
	clientIP = "127.0.0.50"
	nodes    = 3
)

var (
	replicaIPs  = []string{"127.0.0.11", "127.0.0.12", "127.0.0.13"}
	placeholder = regexp.MustCompile(`@[A-Z0-9_]+@`)
)

// ports are the ones every replica and the balancer use.
type ports struct{ bootstrap, brokerBase, admin int }

// freePorts finds a bootstrap port, nodes consecutive broker ports and an
// admin port that are free on the balancer's and every replica's address.
func freePorts(t *testing.T) ports {
	t.Helper()
	free := func(port int) bool {
		for _, ip := range append([]string{balancer}, replicaIPs...) {
			ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
			if err != nil {
				return false
			}
			ln.Close()
		}
		return true
	}
	for base := 20000 + os.Getpid()%20000; base < 60000; base += 10 {
		p := ports{bootstrap: base, brokerBase: base + 1, admin: base + 1 + nodes}
		ok := true
		for port := p.bootstrap; port <= p.admin; port++ {
			ok = ok && free(port)
		}
		if ok {
			return p
		}
	}
	t.Fatal("no free ports on 127.0.0.10-13")
	return ports{}
}

// fill replaces the @NAMES@ of a deploy/haproxy template.
func fill(t *testing.T, template string, vars map[string]string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "haproxy", template))
	if err != nil {
		t.Fatal(err)
	}
	pairs := make([]string, 0, 2*len(vars))
	for k, v := range vars {
		pairs = append(pairs, "@"+k+"@", v)
	}
	out := strings.NewReplacer(pairs...).Replace(string(b))
	if left := placeholder.FindString(out); left != "" {
		t.Fatalf("%s: %s not filled", template, left)
	}
	return out
}

// replica is one kproxy process and every log line it wrote.
type replica struct {
	ip    string
	bin   *testkit.Binary
	audit string
	mu    sync.Mutex
	lines []testkit.LogLine
	done  chan struct{} // closed when its log ended (the process exited)
}

func (r *replica) collect() {
	defer close(r.done)
	for {
		l, ok := r.bin.Next(time.Hour)
		if !ok {
			return
		}
		r.mu.Lock()
		r.lines = append(r.lines, l)
		r.mu.Unlock()
	}
}

func (r *replica) logLines() []testkit.LogLine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]testkit.LogLine(nil), r.lines...)
}

// clientConns counts the connections from clientIP the replica logged
// as connected upstream.
func (r *replica) clientConns() int {
	conns := map[any]bool{}
	for _, l := range r.logLines() {
		if addr, _ := l["client"].(string); strings.HasPrefix(addr, clientIP+":") && l.Message() == "upstream connected" {
			conns[l["conn"]] = true
		}
	}
	return len(conns)
}

// clientDialer connects from clientIP, as a client elsewhere would.
func clientDialer(ctx context.Context, network, host string) (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(clientIP)}}
	return d.DialContext(ctx, network, host)
}

// stamped is a record value and when it was acknowledged or consumed.
type stamped struct {
	value string
	at    time.Time
}

// longestGap is the longest time without an event in events (sorted by
// time) between from and from+window, counting from from.
func longestGap(events []time.Time, from time.Time, window time.Duration) time.Duration {
	last, gap := from, time.Duration(0)
	for _, at := range events {
		if at.Before(from) {
			continue
		}
		if at.After(from.Add(window)) {
			break
		}
		gap = max(gap, at.Sub(last))
		last = at
	}
	return max(gap, min(time.Since(last), from.Add(window).Sub(last)))
}

func TestReplicasBehindHAProxy(t *testing.T) {
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy is not installed (apt-get install -y haproxy; .ci/run installs it): skipping the replicas-behind-HAProxy test")
	}
	started := time.Now()
	bin := testkit.BuildKproxy(t)
	cluster := testkit.Cluster(t, nodes, kfake.SeedTopics(3, "ha.franz", "ha.kcat"))
	p := freePorts(t)
	dir := t.TempDir()
	upstream := `"` + strings.Join(cluster.ListenAddrs(), `", "`) + `"`

	replicas := make([]*replica, len(replicaIPs))
	for i, ip := range replicaIPs {
		r := &replica{ip: ip, audit: filepath.Join(dir, fmt.Sprintf("audit-%d.log", i+1)), done: make(chan struct{})}
		cfg := fill(t, "kproxy-replica.yaml.tmpl", map[string]string{
			"UPSTREAM": upstream, "BIND": ip, "BALANCER": balancer, "BOOTSTRAP_PORT": strconv.Itoa(p.bootstrap),
			"BROKER_PORT_BASE": strconv.Itoa(p.brokerBase), "ADMIN_PORT": strconv.Itoa(p.admin),
			"LOG_LEVEL": "debug", "AUDIT": r.audit,
		})
		path := filepath.Join(dir, fmt.Sprintf("kproxy-%d.yaml", i+1))
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		r.bin = testkit.RunBinary(t, bin, path)
		r.bin.WaitReady()
		go r.collect()
		replicas[i] = r
	}

	hcfg := filepath.Join(dir, "haproxy.cfg")
	haproxyCfg := fill(t, "haproxy.cfg.tmpl", map[string]string{
		"BALANCER": balancer, "BOOTSTRAP_PORT": strconv.Itoa(p.bootstrap),
		"BROKER_PORTS": fmt.Sprintf("%d-%d", p.brokerBase, p.brokerBase+nodes-1), "ADMIN_PORT": strconv.Itoa(p.admin),
		"REPLICA1": replicaIPs[0], "REPLICA2": replicaIPs[1], "REPLICA3": replicaIPs[2],
	})
	if err := os.WriteFile(hcfg, []byte(haproxyCfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var haproxyLog logbuf.Buffer
	hp := exec.Command(haproxy, "-db", "-f", hcfg)
	hp.Stdout, hp.Stderr = &haproxyLog, &haproxyLog
	if err := hp.Start(); err != nil {
		t.Fatalf("start haproxy: %v", err)
	}
	t.Cleanup(func() {
		hp.Process.Kill()
		hp.Wait()
		if t.Failed() {
			t.Logf("haproxy log:\n%s", haproxyLog.String())
		}
	})
	seed := net.JoinHostPort(balancer, strconv.Itoa(p.bootstrap))
	waitHealthy(t, &haproxyLog, seed)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	kcatRoundTrip(t, ctx, seed)

	// franz-go: an idempotent producer and a group consumer, streaming
	// while one replica is killed and another drained.
	base := []kgo.Opt{kgo.SeedBrokers(seed), kgo.Dialer(clientDialer),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond })}
	producer, err := kgo.NewClient(append(base, kgo.DefaultProduceTopic("ha.franz"), kgo.RecordDeliveryTimeout(60*time.Second))...)
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	consumer, err := kgo.NewClient(append(base, kgo.ConsumeTopics("ha.franz"), kgo.ConsumerGroup("ha.franz.g"),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()), kgo.FetchMaxWait(200*time.Millisecond))...)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()

	var mu sync.Mutex
	var acked, consumed []stamped
	var failures []error
	stopProducing := make(chan struct{})
	producing := make(chan struct{})
	go func() {
		defer close(producing)
		for i := 0; ; i++ {
			select {
			case <-stopProducing:
				return
			case <-time.After(5 * time.Millisecond):
			}
			value := fmt.Sprintf("r%06d", i)
			producer.Produce(ctx, &kgo.Record{Value: []byte(value)}, func(_ *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failures = append(failures, err)
					return
				}
				acked = append(acked, stamped{value, time.Now()})
			})
		}
	}()
	consumerCtx, stopConsuming := context.WithCancel(ctx)
	consuming := make(chan struct{})
	go func() {
		defer close(consuming)
		for consumerCtx.Err() == nil {
			fs := consumer.PollFetches(consumerCtx)
			fs.EachError(func(topic string, part int32, err error) {
				if consumerCtx.Err() == nil {
					t.Logf("consumer: fetch %s/%d: %v", topic, part, err)
				}
			})
			now := time.Now()
			mu.Lock()
			fs.EachRecord(func(r *kgo.Record) { consumed = append(consumed, stamped{string(r.Value), now}) })
			mu.Unlock()
		}
	}()

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
	close(stopProducing)
	<-producing
	if err := producer.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}

	// Every acknowledged record must be consumed.
	mu.Lock()
	want := make(map[string]bool, len(acked))
	for _, a := range acked {
		want[a.value] = true
	}
	mu.Unlock()
	missing := func() int {
		mu.Lock()
		defer mu.Unlock()
		seen := make(map[string]bool, len(consumed))
		for _, c := range consumed {
			seen[c.value] = true
		}
		n := 0
		for v := range want {
			if !seen[v] {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(30 * time.Second); missing() > 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	stopConsuming()
	<-consuming

	mu.Lock()
	ackTimes, consumeTimes := times(acked), times(consumed)
	nAcked, nConsumed, nFailed := len(acked), len(consumed), len(failures)
	mu.Unlock()
	lost := missing()
	t.Logf("records: %d acked, %d consumed (%d distinct acked), %d not acked (producer errors), %d acked but not consumed",
		nAcked, nConsumed, len(want), nFailed, lost)
	t.Logf("after SIGKILL of %s: longest pause in acks %s, in consumption %s (within 5s of the kill)",
		killed.ip, longestGap(ackTimes, killAt, 5*time.Second).Round(time.Millisecond), longestGap(consumeTimes, killAt, 5*time.Second).Round(time.Millisecond))
	t.Logf("after SIGTERM of %s: longest pause in acks %s, in consumption %s (within 4s of the signal); drain took %s",
		drained.ip, longestGap(ackTimes, drainAt, 4*time.Second).Round(time.Millisecond), longestGap(consumeTimes, drainAt, 4*time.Second).Round(time.Millisecond),
		drainTook.Round(time.Millisecond))
	if lost > 0 {
		t.Errorf("%d acknowledged records were never consumed", lost)
	}
	if nAcked < 1000 {
		t.Errorf("only %d records acknowledged in ~14s of producing", nAcked)
	}
	if nFailed > 0 {
		t.Errorf("%d records failed to produce, first: %v", nFailed, failures[0])
	}

	checkClientAddresses(t, replicas)
	t.Logf("test took %s", time.Since(started).Round(time.Second))
}

func times(s []stamped) []time.Time {
	out := make([]time.Time, len(s))
	for i, x := range s {
		out[i] = x.at
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// waitHealthy waits until HAProxy has every replica up (its log says so
// for none down) and its bootstrap port accepts connections.
func waitHealthy(t *testing.T, log *logbuf.Buffer, seed string) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", seed, time.Second); err == nil {
			c.Close()
			time.Sleep(1200 * time.Millisecond) // rise 2 × inter 500ms: every replica checked up
			return
		}
	}
	t.Fatalf("haproxy did not listen on %s:\n%s", seed, log.String())
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
