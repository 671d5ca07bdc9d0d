// Package e2ereplicas runs kproxy as it is deployed to scale out: three
// replicas of the real binary with one configuration, each on its own
// loopback address and the same ports, behind a real HAProxy in TCP mode
// (round robin per connection, PROXY protocol v2), in front of one kfake
// cluster. The configurations are deploy/haproxy's, which deploy/haproxy/
// run.sh uses too.
package e2ereplicas

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

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

// startReplicas runs the kproxy binary bin once per replica address, each
// with deploy/haproxy's replica configuration in front of cluster, and
// waits until every one is ready.
func startReplicas(t *testing.T, bin string, cluster *kfake.Cluster, p ports, dir string) []*replica {
	t.Helper()
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
	return replicas
}

// startHAProxy runs haproxy with deploy/haproxy's configuration until the
// test ends, waits until it serves, and returns the bootstrap address.
func startHAProxy(t *testing.T, haproxy string, p ports, dir string) string {
	t.Helper()
	cfg := fill(t, "haproxy.cfg.tmpl", map[string]string{
		"BALANCER": balancer, "BOOTSTRAP_PORT": strconv.Itoa(p.bootstrap),
		"BROKER_PORTS": fmt.Sprintf("%d-%d", p.brokerBase, p.brokerBase+nodes-1), "ADMIN_PORT": strconv.Itoa(p.admin),
		"REPLICA1": replicaIPs[0], "REPLICA2": replicaIPs[1], "REPLICA3": replicaIPs[2],
	})
	log := testkit.RunHAProxy(t, haproxy, cfg)
	seed := net.JoinHostPort(balancer, strconv.Itoa(p.bootstrap))
	waitHealthy(t, log, seed)
	return seed
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
