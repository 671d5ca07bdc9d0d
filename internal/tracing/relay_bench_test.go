package tracing

import (
	"fmt"
	"testing"

	"github.com/kproxy/kproxy/bench/relaytest"
	"github.com/kproxy/kproxy/internal/engine"
	"github.com/kproxy/kproxy/internal/testkit"
)

// BenchmarkRelayTraced is the relay with tracing off, on with no request
// sampled, and on at 1%, so allocs/op show what tracing costs per request
// (run with -benchmem). The exporter is the SDK's in-memory one: the
// export itself runs on the tracer's goroutine, off the relay.
func BenchmarkRelayTraced(b *testing.B) {
	for _, shape := range []relaytest.Shape{relaytest.Ping, relaytest.Produce64K} {
		be, err := relaytest.NewBackend(shape)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(be.Close)
		for _, ratio := range []float64{-1, 0, 0.01} {
			name := "off"
			if ratio >= 0 {
				name = fmt.Sprintf("ratio-%g", ratio)
			}
			b.Run(shape.Name+"/"+name, func(b *testing.B) {
				var opts []engine.Option
				if ratio >= 0 {
					tr, _ := newTestTracer(b, tracingConfig(ratio, 2048), newMemoryExporter())
					opts = append(opts, engine.WithRequestObservers(tr))
				}
				kp := testkit.StartEngine(b, testkit.Engine{YAML: testkit.LocalConfig(be.Addr()), Options: opts})
				relaytest.Run(b, kp.Server.BootstrapAddr(), shape)
			})
		}
	}
}
