package engine

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/config"
)

// fixedPorts is a listener kind only this test knows: a bootstrap port
// and one port per node of a list fixed up front, all on loopback, bound
// at once rather than as nodes appear, and never following upstream
// health. It is what a third kind must provide, and no more.
type fixedPorts struct {
	s         *Server
	nodes     []int32
	bootstrap net.Listener
	ports     map[int32]net.Listener
	table     responseFilters
	bound     atomic.Bool
	closed    atomic.Bool
}

// withFixedPorts plugs a fixedPorts listener for nodes into the Server,
// after the listeners the configuration asks for.
func withFixedPorts(nodes ...int32) (Option, *fixedPorts) {
	f := &fixedPorts{nodes: nodes, ports: map[int32]net.Listener{}}
	return func(s *Server) {
		f.s = s
		s.listeners = append(s.listeners, f)
	}, f
}

func fixedName(nodeID int32) string {
	if nodeID == bootstrapNode {
		return "fixed-bootstrap"
	}
	return "fixed-" + strconv.Itoa(int(nodeID))
}

func (f *fixedPorts) bind() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	f.bootstrap = ln
	for _, id := range f.nodes {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			f.close()
			return err
		}
		f.ports[id] = ln
	}
	f.bound.Store(true)
	return nil
}

func (f *fixedPorts) serve() {
	f.s.serveListener(f.bootstrap, bootstrapNode, fixedName(bootstrapNode), f)
	for id, ln := range f.ports {
		f.s.serveListener(ln, id, fixedName(id), f)
	}
}

func (f *fixedPorts) nodeSeen(nodeID int32, _ string) error {
	if _, ok := f.ports[nodeID]; !ok {
		return fmt.Errorf("node %d has no fixed port", nodeID)
	}
	return nil
}

func (f *fixedPorts) advertised(nodeID int32) (advertisedNode, bool) {
	ln, ok := f.ports[nodeID]
	if !ok {
		return advertisedNode{}, false
	}
	return advertisedNode{host: "127.0.0.1", port: int32(ln.Addr().(*net.TCPAddr).Port), listening: f.ready()}, true
}

func (f *fixedPorts) upstreamChanged(string) {}

func (f *fixedPorts) route(*pair) error { return nil }

func (f *fixedPorts) responses() *responseFilters { return &f.table }

func (f *fixedPorts) ready() bool { return f.bound.Load() && !f.closed.Load() }

func (f *fixedPorts) close() {
	if !f.closed.CompareAndSwap(false, true) {
		return
	}
	if f.bootstrap != nil {
		f.bootstrap.Close()
	}
	for _, ln := range f.ports {
		ln.Close()
	}
}

// addrs is every address of f: its bootstrap port and its node ports.
func (f *fixedPorts) addrs() []string {
	out := []string{f.bootstrap.Addr().String()}
	for _, ln := range f.ports {
		out = append(out, ln.Addr().String())
	}
	return out
}

// dialLog records every address a client dials.
type dialLog struct {
	mu    sync.Mutex
	addrs []string
}

func (d *dialLog) dial(ctx context.Context, network, host string) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, host)
	d.mu.Unlock()
	var nd net.Dialer
	return nd.DialContext(ctx, network, host)
}

func (d *dialLog) dialed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.addrs)
}

// A third listener kind plugs into the Server through the listener
// interface alone, beside port-per-broker: a franz-go client bootstrapped
// from it produces and consumes through it against a three-broker
// cluster, is told only its ports for the brokers (its own response table
// rewrites the addresses), and so never reaches the port-per-broker ports.
func TestAThirdListenerKindServesClients(t *testing.T) {
	const topic = "seam"
	cluster, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	cfg, err := config.Parse(strings.NewReader(fmt.Sprintf(`
upstream: {bootstrap_servers: ["%s"]}
listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0}
`, strings.Join(cluster.ListenAddrs(), `", "`))))
	if err != nil {
		t.Fatal(err)
	}
	withFixed, fixed := withFixedPorts(0, 1, 2)
	reg := prometheus.NewRegistry()
	s := New(cfg, zerolog.Nop(), reg, withFixed)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	if err := s.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}

	var dials dialLog
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(fixed.bootstrap.Addr().String()),
		kgo.Dialer(dials.dial),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	const n = 9 // three per partition, so every broker leads some
	want := map[string]bool{}
	for i := range n {
		v := "record-" + strconv.Itoa(i)
		want[v] = true
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %s through the fixed listener: %v", v, err)
		}
	}
	got := map[string]bool{}
	for len(got) < n && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachError(func(tp string, p int32, err error) {
			if ctx.Err() == nil {
				t.Errorf("fetch %s[%d] through the fixed listener: %v", tp, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)] = true })
	}
	if len(got) != n {
		t.Fatalf("consumed %d of the %d records produced: %v", len(got), n, got)
	}

	ours := fixed.addrs()
	for _, a := range dials.dialed() {
		if !slices.Contains(ours, a) {
			t.Errorf("the client dialed %s, not a port of the fixed listener %v: its metadata named another listener's address", a, ours)
		}
	}
	for _, id := range partitionLeaders(t, ctx, cl, topic) {
		if v := admissionMetric(t, reg, "kproxy_connections_total", "listener", fixedName(id)); v == 0 {
			t.Errorf("kproxy_connections_total{listener=%q} = 0: the client never reached node %d, a leader of %s, through its fixed port", fixedName(id), id, topic)
		}
	}
	for _, id := range []int32{0, 1, 2} {
		if v := admissionMetric(t, reg, "kproxy_connections_total", "listener", listenerName(id)); v != 0 {
			t.Errorf("kproxy_connections_total{listener=%q} = %v: the client reached a port-per-broker port", listenerName(id), v)
		}
	}
	if addr, ok := s.BrokerAddr(0); !ok || slices.Contains(ours, addr) {
		t.Errorf("BrokerAddr(0) = %q, %v: want the port-per-broker listener's own port, still open beside the fixed one", addr, ok)
	}
}

// partitionLeaders lists the nodes leading topic's partitions, asked
// through cl.
func partitionLeaders(t *testing.T, ctx context.Context, cl *kgo.Client, topic string) []int32 {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var leaders []int32
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			if !slices.Contains(leaders, p.Leader) {
				leaders = append(leaders, p.Leader)
			}
		}
	}
	if len(leaders) == 0 {
		t.Fatalf("metadata names no leader of %s", topic)
	}
	return leaders
}
