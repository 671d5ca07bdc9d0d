package relay_test

import (
	"net"
	"testing"

	"github.com/kproxy/kproxy/bench/relay"
	"github.com/kproxy/kproxy/bench/relaytest"
)

// startRelay runs a relay of mode in this process in front of target and
// returns its address.
func startRelay(tb testing.TB, mode relay.Mode, target string) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- relay.Serve(ln, target, mode) }()
	tb.Cleanup(func() {
		ln.Close()
		// Serve waits for open pairs; the harness has closed its
		// connection by now, so they end.
		if err := <-done; err != nil {
			tb.Error(err)
		}
	})
	return ln.Addr().String()
}

// BenchmarkRelay measures the reference relays with relaytest's
// Kafka-shaped loads. "direct" is the harness against the backend with no
// relay, the floor every relay is compared with. kproxy's own benchmark
// should use the same shapes and backend:
//
//	go test -run '^$' -bench . -benchtime 2s ./bench/relay/
func BenchmarkRelay(b *testing.B) {
	for _, shape := range relaytest.Shapes() {
		for _, mode := range []relay.Mode{"direct", relay.Splice, relay.Copy} {
			b.Run(shape.Name+"/"+string(mode), func(b *testing.B) {
				be, err := relaytest.NewBackend(shape)
				if err != nil {
					b.Fatal(err)
				}
				defer be.Close()
				addr := be.Addr()
				if mode != "direct" {
					addr = startRelay(b, mode, addr)
				}
				relaytest.Run(b, addr, shape)
			})
		}
	}
}

// TestRelays sends each shape through each relay: the benchmark's harness
// and relays agree on framing and half-close.
func TestRelays(t *testing.T) {
	for _, mode := range []relay.Mode{relay.Splice, relay.Copy} {
		for _, shape := range relaytest.Shapes() {
			t.Run(string(mode)+"/"+shape.Name, func(t *testing.T) {
				be, err := relaytest.NewBackend(shape)
				if err != nil {
					t.Fatal(err)
				}
				defer be.Close()
				addr := startRelay(t, mode, be.Addr())
				if err := relaytest.Check(addr, shape, 50); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
