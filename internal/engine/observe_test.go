package engine_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/engine"
	"github.com/kproxy/kproxy/internal/testkit"
)

// recordingObserver keeps a copy of every timing it is shown.
type recordingObserver struct {
	mu   sync.Mutex
	seen []engine.RequestTiming
}

func (r *recordingObserver) ObserveRequest(t *engine.RequestTiming) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, *t)
}

// last returns the last timing seen for key, waiting briefly: the
// response loop observes after writing the response.
func (r *recordingObserver) last(t *testing.T, key int16) engine.RequestTiming {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		r.mu.Lock()
		for i := len(r.seen) - 1; i >= 0; i-- {
			if r.seen[i].Key == key {
				defer r.mu.Unlock()
				return r.seen[i]
			}
		}
		r.mu.Unlock()
	}
	t.Fatalf("no request with key %d observed", key)
	return engine.RequestTiming{}
}

// TestLatencySplitAddsUpToRoundTrip delays the broker's answer to one
// ListOffsets (a response kproxy streams) by a known amount and checks
// that the in-proxy and upstream histograms split the round trip kproxy
// observed: the delay lands in the upstream part, the two parts add up to
// the total, and the total is within what the client measured.
func TestLatencySplitAddsUpToRoundTrip(t *testing.T) {
	const delay = 150 * time.Millisecond
	cluster := testkit.Cluster(t, 1)
	var delayed sync.Once
	cluster.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		delayed.Do(func() { time.Sleep(delay) }) // the broker's socket answers late
		return nil, nil, false
	})
	obs := &recordingObserver{}
	kp := testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: cluster.ListenAddrs()}.YAML(), Options: []engine.Option{engine.WithRequestObservers(obs)}})

	c := dialRaw(t, kp.BootstrapAddr())
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(4)
	topic := kmsg.NewListOffsetsRequestTopic()
	topic.Topic = "t"
	part := kmsg.NewListOffsetsRequestTopicPartition()
	part.Timestamp = -1
	topic.Partitions = append(topic.Partitions, part)
	req.Topics = append(req.Topics, topic)
	sent := time.Now()
	corr := c.send(req)
	frame, _ := c.recvRaw(req, corr)
	clientRoundTrip := time.Since(sent)

	got := obs.last(t, int16(kmsg.ListOffsets))
	if got.CorrelationID != corr || got.Version != 4 || got.Listener != "bootstrap" || got.NodeID != -1 || got.Local {
		t.Errorf("observed %+v, want ListOffsets v4 correlation id %d on bootstrap (node -1), not local", got, corr)
	}
	if got.ResponseBytes != 4+len(frame) || got.RequestBytes <= 0 { // frame: without its size prefix
		t.Errorf("observed %d request bytes and %d response bytes; the client got a %d-byte response", got.RequestBytes, got.ResponseBytes, 4+len(frame))
	}
	if !(got.Start.Before(got.SentUpstream) || got.Start.Equal(got.SentUpstream)) ||
		got.UpstreamFirstByte.Before(got.SentUpstream) || got.Done.Before(got.UpstreamFirstByte) {
		t.Errorf("timestamps out of order: start %v, sent %v, first byte %v, done %v", got.Start, got.SentUpstream, got.UpstreamFirstByte, got.Done)
	}

	n, total := testkit.HistogramValue(t, kp.Registry, "kproxy_request_duration_seconds", "api", "ListOffsets")
	nu, upstream := testkit.HistogramValue(t, kp.Registry, "kproxy_request_upstream_duration_seconds", "api", "ListOffsets")
	np, inProxy := testkit.HistogramValue(t, kp.Registry, "kproxy_request_proxy_duration_seconds", "api", "ListOffsets")
	if n != 1 || nu != 1 || np != 1 {
		t.Fatalf("ListOffsets latency samples: total %d, upstream %d, in-proxy %d; want 1 each", n, nu, np)
	}
	if upstream < delay.Seconds() {
		t.Errorf("upstream part %.6fs is less than the broker's delay %v", upstream, delay)
	}
	if inProxy >= delay.Seconds()/2 {
		t.Errorf("in-proxy part %.6fs holds the broker's delay %v", inProxy, delay)
	}
	if diff := total - (upstream + inProxy); diff > 1e-9 || diff < -1e-9 {
		t.Errorf("in-proxy %.9fs + upstream %.9fs != total %.9fs", inProxy, upstream, total)
	}
	if total > clientRoundTrip.Seconds() {
		t.Errorf("kproxy's round trip %.6fs exceeds the client's %v", total, clientRoundTrip)
	}
}

// A virtual cluster's requests are observed with its name, which the
// tracer puts on their spans (kproxy.virtual_cluster).
func TestTimingNamesTheVirtualCluster(t *testing.T) {
	cluster := testkit.Cluster(t, 1)
	obs := &recordingObserver{}
	kp := testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: cluster.ListenAddrs()}.YAML(), Options: []engine.Option{engine.WithRequestObservers(obs), engine.WithVirtualCluster("team-a", &atomic.Uint64{})}})
	c := dialRaw(t, kp.BootstrapAddr())
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(9)
	if _, err := c.recv(req, c.send(req)); err != nil {
		t.Fatal(err)
	}
	if got := obs.last(t, int16(kmsg.Metadata)); got.VirtualCluster != "team-a" {
		t.Errorf("observed virtual cluster %q, want team-a", got.VirtualCluster)
	}
}
