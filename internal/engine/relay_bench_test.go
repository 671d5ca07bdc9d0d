package engine

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/bench/relaytest"
	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/testkit/tcppeer"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// fetchResponseBody is a valid Fetch response body at version carrying
// records bytes of record batches in one partition.
func fetchResponseBody(version int16, records int) []byte {
	return fetchResponse(version, 0, make([]byte, records)).AppendTo(nil)
}

// frameEchoUpstream answers every request frame with a response frame
// holding body and the request's correlation id. It is a benchmark peer
// that costs nearly nothing, so the numbers are kproxy's.
func frameEchoUpstream(tb testing.TB, headerTags bool, body []byte) string {
	return tcppeer.Serve(tb, func(conn net.Conn) {
		r := bufio.NewReaderSize(conn, 64<<10)
		w := bufio.NewWriterSize(conn, 64<<10)
		resp := []byte{0, 0, 0, 0, 0, 0, 0, 0}
		if headerTags {
			resp = append(resp, 0)
		}
		resp = append(resp, body...)
		binary.BigEndian.PutUint32(resp, uint32(len(resp)-4))
		var hdr [12]byte
		for {
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				return
			}
			size := int(binary.BigEndian.Uint32(hdr[:]))
			if _, err := r.Discard(size - 8); err != nil {
				return
			}
			copy(resp[4:8], hdr[8:12]) // correlation id
			w.Write(resp)
			if r.Buffered() == 0 {
				if w.Flush() != nil {
					return
				}
			}
		}
	})
}

// benchProxyConfig is the configuration of a plain proxy for upstream.
func benchProxyConfig(tb testing.TB, upstream string) *config.Config {
	cfg, err := config.Parse(strings.NewReader(`
upstream: {bootstrap_servers: ["` + upstream + `"]}
listeners: {bind_host: 127.0.0.1}
`))
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

func startBenchProxy(tb testing.TB, upstream string, opts ...Option) *Server {
	s := New(benchProxyConfig(tb, upstream), zerolog.Nop(), prometheus.NewRegistry(), opts...)
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cancel(); s.Shutdown(context.Background()) })
	return s
}

// BenchmarkRelayPassthrough measures the streamed path: pipelined Fetch
// requests and record-carrying responses through kproxy, in batches of 64
// in flight. One op is one request and its response. At v11 responses are
// streamed untouched; at v18 (what current clients use) they are walked on
// the way for leader endpoints, still without being held or copied whole.
func BenchmarkRelayPassthrough(b *testing.B) {
	for _, version := range []int16{11, protocol.MaxVersion(wire.FetchKey)} {
		for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
			b.Run("fetch-v"+strconv.Itoa(int(version))+"/"+byteSize(size), func(b *testing.B) {
				benchRelay(b, wire.FetchKey, version, size)
			})
		}
	}
}

func benchRelay(b *testing.B, key, version int16, size int) {
	body := fetchResponseBody(version, size)
	upstream := frameEchoUpstream(b, wire.ResponseHeaderFlexible(key, version), body)
	s := startBenchProxy(b, upstream)
	conn, err := net.Dial("tcp", s.BootstrapAddr())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()

	req := wire.AppendRequestHeader(make([]byte, 4, 4+size), protocol.RequestHeader{
		APIKey: key, APIVersion: version, ClientID: "bench", Flexible: protocol.IsFlexible(key, version),
	})
	req = append(req, make([]byte, size-len(req)+4)...)
	binary.BigEndian.PutUint32(req, uint32(len(req)-4))
	r := bufio.NewReaderSize(conn, 64<<10)
	const batch = 64

	// One writer goroutine, fed batch sizes, so the client allocates
	// nothing per op and allocs/op are kproxy's.
	batches := make(chan int)
	defer close(batches)
	go func() {
		corr := uint32(0)
		for n := range batches {
			for i := 0; i < n; i++ {
				binary.BigEndian.PutUint32(req[8:], corr)
				corr++
				if _, err := conn.Write(req); err != nil {
					return
				}
			}
		}
	}()

	b.SetBytes(int64(size + len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	corr := int32(0)
	var hdr [8]byte
	for done := 0; done < b.N; {
		n := min(batch, b.N-done)
		batches <- n
		for i := 0; i < n; i++ {
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				b.Fatal(err)
			}
			if got := int32(binary.BigEndian.Uint32(hdr[4:])); got != corr {
				b.Fatalf("response %d has correlation id %d", corr, got)
			}
			if _, err := r.Discard(int(binary.BigEndian.Uint32(hdr[:])) - 4); err != nil {
				b.Fatal(err)
			}
			corr++
		}
		done += n
	}
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.Itoa(n>>20) + "MiB"
	case n >= 1<<10:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}

// allowAllProduce is a filter that wants every Produce request decoded and
// lets it through: the cost of the engine's filtered path (read the whole
// frame, decode, forward), as a policy that allows the produce pays it,
// without the policy's own decisions.
type allowAllProduce struct{}

func (f allowAllProduce) Register(r *filter.Registry) { filter.OnRequest(r, f.produce) }

func (allowAllProduce) produce(*filter.Conn, *kmsg.ProduceRequest) filter.Verdict {
	return filter.Verdict{}
}

// BenchmarkRelayFilteredProduce compares produce requests streamed through
// kproxy with the same requests read whole and decoded for a filter. The
// ping shape is one small produce at a time: a round trip, not throughput.
func BenchmarkRelayFilteredProduce(b *testing.B) {
	produce1M := relaytest.Shape{Name: "produce-1MiB", Key: wire.ProduceKey, Version: 9, RequestRecords: 1 << 20, InFlight: 2}
	for _, shape := range []relaytest.Shape{relaytest.Ping, relaytest.Produce64K, produce1M} {
		be, err := relaytest.NewBackend(shape)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(be.Close)
		for _, mode := range []string{"streamed", "filtered"} {
			b.Run(shape.Name+"/"+mode, func(b *testing.B) {
				var opts []Option
				if mode == "filtered" {
					opts = append(opts, WithFilters(allowAllProduce{}))
				}
				s := startBenchProxy(b, be.Addr(), opts...)
				relaytest.Run(b, s.BootstrapAddr(), shape)
			})
		}
	}
}
