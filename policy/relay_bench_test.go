package policy

import (
	"io"
	"net"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/bench/relaytest"
	"github.com/kproxy/kproxy/internal/engine"
	"github.com/kproxy/kproxy/internal/testkit"
)

// BenchmarkRelayPolicyProduce is the whole filtered produce path under a
// 50-rule policy, through a real kproxy engine and sockets: produce
// requests shaped like an idempotent kgo producer's (several partitions of
// about 1 MiB of v2 batches each, sizes varying from request to request, as
// the producer's batches do), two in flight, against a backend that costs
// nearly nothing. It reports the peak growth of the Go heap (live and
// garbage) over the run next to ns/op and B/op: what the path costs in RSS.
func BenchmarkRelayPolicyProduce(b *testing.B) {
	for _, shape := range []struct {
		name              string
		partitions, batch int
	}{
		{"5x1MiB", 5, 1 << 20},
		{"1x64KiB", 1, 64 << 10},
		{"mixed", 5, 0},
	} {
		for _, mode := range []string{"streamed", "policy"} {
			b.Run(shape.name+"/"+mode, func(b *testing.B) {
				frames := kgoShapedProduces(shape.partitions, shape.batch)
				be, err := relaytest.NewBackend(relaytest.Shape{Key: 0, Version: benchProduceVersion})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(be.Close)
				var opts []engine.Option
				if mode == "policy" {
					opts = append(opts, engine.WithFilters(newTestEnforcer(b, benchPolicy(50), nil)))
				}
				addr := startRelayBenchProxy(b, be.Addr(), opts...)
				runProduceFrames(b, addr, frames, 2)
			})
		}
	}
}

const benchProduceVersion = 11

// kgoShapedProduces returns eight Produce request frames, each with
// partitions partitions of topic team7.orders holding one idempotent v2
// batch of about batchBytes (varied by up to -12%, differently in each
// frame; batchBytes 0: from 8 KiB to 1 MiB, a producer under a varying
// load), client id svc-7-orders, so benchPolicy's writers-7 rule allows
// them.
func kgoShapedProduces(partitions, batchBytes int) [][]byte {
	var frames [][]byte
	for f := 0; f < 8; f++ {
		r := kmsg.NewPtrProduceRequest()
		r.SetVersion(benchProduceVersion)
		r.Acks = -1
		r.TimeoutMillis = 30000
		t := kmsg.NewProduceRequestTopic()
		t.Topic = "team7.orders"
		for p := 0; p < partitions; p++ {
			pad := batchBytes - batchBytes*((f*7+p*3)%13)/100
			if batchBytes == 0 { // mixed: 40 KiB to 5 MiB requests
				pad = 8 << 10 << ((f * 5) % 8)
			}
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition = int32(p)
			rp.Records = batch(0, 4242, pad)
			t.Partitions = append(t.Partitions, rp)
		}
		r.Topics = append(r.Topics, t)
		frames = append(frames, kmsg.NewRequestFormatter(kmsg.FormatterClientID("svc-7-orders")).AppendRequest(nil, r, 0))
	}
	return frames
}

// startRelayBenchProxy starts kproxy in front of upstream with logging
// off, as a benchmark wants it, and returns its bootstrap address.
func startRelayBenchProxy(tb testing.TB, upstream string, opts ...engine.Option) string {
	yaml := "upstream: {bootstrap_servers: [\"" + upstream + "\"]}\nlisteners: {bind_host: 127.0.0.1}\n"
	return testkit.StartEngine(tb, testkit.Engine{YAML: yaml, Log: io.Discard, Level: zerolog.Disabled, Options: opts}).BootstrapAddr()
}

// runProduceFrames sends b.N requests, cycling through frames, with
// inFlight outstanding, reading every response; it reports the peak Go
// heap seen while it ran.
func runProduceFrames(b *testing.B, addr string, frames [][]byte, inFlight int) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	// Warm up: the upstream is dialled and the frame pool holds buffers
	// grown for these frames, so what is measured is the steady state.
	if err := relaytest.Pipeline(conn, frames, 0, inFlight, 2*len(frames)); err != nil {
		b.Fatal(err)
	}
	total := 0
	for _, f := range frames {
		total += len(f)
	}
	// The heap before the run holds the frames above: the peak is reported
	// over it, so what is left is kproxy's.
	runtime.GC()
	heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(heap)
	base := heap[0].Value.Uint64() + heap[1].Value.Uint64()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		s := slices.Clone(heap)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64() + s[1].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	b.SetBytes(int64(total / len(frames)))
	b.ReportAllocs()
	b.ResetTimer()
	err = relaytest.Pipeline(conn, frames, 0, inFlight, b.N)
	b.StopTimer()
	close(stop)
	<-sampled
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(peak.Load()-min(base, peak.Load()))/(1<<20), "peak-heap-MiB")
}
