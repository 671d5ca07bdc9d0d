// Package relaytest is a Kafka-shaped load harness for comparing relays in
// `go test -bench`: the reference relays of bench/relay, and kproxy's own
// pair engine, measured with the same client, the same backend and the same
// frames.
//
// The client sends real Kafka request frames (encoded once with kmsg, the
// correlation id patched per request) with a fixed number in flight; the
// Backend answers each with a canned response frame carrying that
// correlation id. Requests and responses are valid Kafka, so a
// protocol-aware proxy can parse, and even decode, them; their sizes are
// chosen by the Shape. The harness allocates nothing per request, so
// allocs/op is the relay's (plus the runtime's).
//
// A benchmark for a relay looks like:
//
//	be, _ := relaytest.NewBackend()
//	defer be.Close()
//	front := startRelay(be.Addr()) // the relay under test
//	relaytest.Run(b, front, relaytest.Produce64K)
package relaytest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Topic is the topic named in every request and response.
const Topic = "relaytest"

// Shape is one request/response pattern.
type Shape struct {
	Name string
	// Key is kmsg's API key: 0 (Produce) or 1 (Fetch).
	Key int16
	// Version of the request and response. Produce v9 and Fetch v12 are
	// flexible and carry no broker addresses, so a proxy streams them.
	Version int16
	// RequestRecords and ResponseRecords are the sizes of the opaque
	// record-batch bytes carried by the request (Produce) or the response
	// (Fetch).
	RequestRecords, ResponseRecords int
	// InFlight is how many requests the client keeps outstanding.
	InFlight int
}

// The shapes the reference benchmarks use. Produce64K looks like a busy
// producer (one 64 KiB batch per request, a few requests in flight), Fetch1M
// like a consumer (one 1 MiB response at a time), and Ping like the
// latency load: one small produce, nothing else in flight.
var (
	Produce64K = Shape{Name: "produce-64KiB", Key: 0, Version: 9, RequestRecords: 64 << 10, InFlight: 4}
	Fetch1M    = Shape{Name: "fetch-1MiB", Key: 1, Version: 12, ResponseRecords: 1 << 20, InFlight: 1}
	Ping       = Shape{Name: "ping-100B", Key: 0, Version: 9, RequestRecords: 100, InFlight: 1}
)

// Shapes lists the reference shapes.
func Shapes() []Shape { return []Shape{Produce64K, Fetch1M, Ping} }

// Frames returns the request frame and the response frame of s, both
// complete with their size prefix, correlation id 0.
func (s Shape) Frames() (req, resp []byte) {
	switch s.Key {
	case 0:
		r := kmsg.NewPtrProduceRequest()
		r.Version = s.Version
		r.Acks = -1
		r.TimeoutMillis = 30000
		t := kmsg.NewProduceRequestTopic()
		t.Topic = Topic
		p := kmsg.NewProduceRequestTopicPartition()
		p.Records = make([]byte, s.RequestRecords)
		t.Partitions = append(t.Partitions, p)
		r.Topics = append(r.Topics, t)
		req = formatRequest(r)

		rs := kmsg.NewPtrProduceResponse()
		rs.Version = s.Version
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = Topic
		rp := kmsg.NewProduceResponseTopicPartition()
		rp.LogStartOffset = 0
		rt.Partitions = append(rt.Partitions, rp)
		rs.Topics = append(rs.Topics, rt)
		resp = appendResponse(nil, 0, rs)
	case 1:
		r := kmsg.NewPtrFetchRequest()
		r.Version = s.Version
		r.ReplicaID = -1
		r.MaxWaitMillis = 500
		r.MaxBytes = 50 << 20
		t := kmsg.NewFetchRequestTopic()
		t.Topic = Topic
		p := kmsg.NewFetchRequestTopicPartition()
		p.PartitionMaxBytes = int32(max(s.ResponseRecords, 1<<20))
		t.Partitions = append(t.Partitions, p)
		r.Topics = append(r.Topics, t)
		req = formatRequest(r)

		rs := kmsg.NewPtrFetchResponse()
		rs.Version = s.Version
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = Topic
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.HighWatermark = 1 << 40
		rp.LastStableOffset = 1 << 40
		rp.RecordBatches = make([]byte, s.ResponseRecords)
		rt.Partitions = append(rt.Partitions, rp)
		rs.Topics = append(rs.Topics, rt)
		resp = appendResponse(nil, 0, rs)
	default:
		panic("relaytest: shape key must be 0 (Produce) or 1 (Fetch)")
	}
	return req, resp
}

// formatRequest is r's request frame, correlation id 0.
func formatRequest(r kmsg.Request) []byte {
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("relaytest")).AppendRequest(nil, r, 0)
}

// appendResponse appends a response frame: size, correlation id, the
// flexible header's empty tag section (except for ApiVersions, whose
// response header is always v0), then the body.
func appendResponse(dst []byte, corr int32, r kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(corr))
	if r.IsFlexible() && r.Key() != 18 {
		dst = append(dst, 0)
	}
	dst = r.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// Run measures shape s against the relay at addr: b.N requests, each
// answered, with s.InFlight outstanding. Throughput is request plus
// response bytes per op. The connection is dialled before the timer
// starts.
func Run(b *testing.B, addr string, s Shape) {
	b.Helper()
	req, resp := s.Frames()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	// One round trip first, so a lazily dialled upstream is connected.
	if err := exchange(conn, req, len(resp)); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(req) + len(resp)))
	b.ReportAllocs()
	b.ResetTimer()
	if err := drive(conn, req, len(resp), s.InFlight, b.N); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
}

func exchange(conn net.Conn, req []byte, respLen int) error {
	return drive(conn, req, respLen, 1, 1)
}

// Check sends n requests of shape s to addr on one connection, as Run does,
// and reports the first framing or correlation error. For tests.
func Check(addr string, s Shape, n int) error {
	req, resp := s.Frames()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	return drive(conn, req, len(resp), s.InFlight, n)
}

func drive(conn net.Conn, req []byte, respLen, inFlight, n int) error {
	return Pipeline(conn, [][]byte{append([]byte(nil), req...)}, respLen, inFlight, n)
}

// Pipeline sends n requests on conn, the frames round robin (each a whole
// request frame, size prefix included, into whose bytes 8 to 12 it writes
// correlation id i for the i-th request, i from 1 to n: frames are
// changed, not copied), keeping at most inFlight unanswered. It reads every response and
// returns the first whose correlation id is not its request's, or, if
// respLen > 0, whose frame (size prefix included) is not respLen bytes.
func Pipeline(conn net.Conn, frames [][]byte, respLen, inFlight, n int) error {
	tokens := make(chan struct{}, inFlight)
	werr := make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for i := 1; i <= n; i++ {
			select {
			case tokens <- struct{}{}:
			case <-done:
				werr <- errors.New("reader stopped")
				return
			}
			buf := frames[i%len(frames)]
			binary.BigEndian.PutUint32(buf[8:12], uint32(i))
			if _, err := conn.Write(buf); err != nil {
				werr <- err
				return
			}
		}
		werr <- nil
	}()
	r := bufio.NewReaderSize(conn, 64<<10)
	var head [8]byte
	for i := 1; i <= n; i++ {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return fmt.Errorf("response %d: %w", i, err)
		}
		size := int(binary.BigEndian.Uint32(head[:4]))
		corr := int32(binary.BigEndian.Uint32(head[4:]))
		if corr != int32(i) || (respLen > 0 && size+4 != respLen) {
			return fmt.Errorf("response %d: correlation id %d, %d bytes; want id %d of %d bytes (0: any)", i, corr, size+4, i, respLen)
		}
		if _, err := r.Discard(size - 4); err != nil {
			return fmt.Errorf("response %d: %w", i, err)
		}
		<-tokens
	}
	return <-werr
}

// Backend is a stand-in Kafka broker on 127.0.0.1: it answers Produce and
// Fetch with the canned responses of the shape whose key and version match,
// and ApiVersions and Metadata well enough for a Kafka client (such as a
// proxy fetching broker metadata) to see one broker, node 0, at its own
// address.
type Backend struct {
	ln    net.Listener
	host  string
	port  int32
	resps map[[2]int16][]byte // (key, version) -> response frame

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// NewBackend starts a Backend that answers every shape in shapes (all
// reference shapes if none are given).
func NewBackend(shapes ...Shape) (*Backend, error) {
	if len(shapes) == 0 {
		shapes = Shapes()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	host, portStr, _ := net.SplitHostPort(ln.Addr().String())
	port, _ := strconv.Atoi(portStr)
	be := &Backend{ln: ln, host: host, port: int32(port), resps: map[[2]int16][]byte{}, conns: map[net.Conn]struct{}{}}
	for _, s := range shapes {
		_, resp := s.Frames()
		be.resps[[2]int16{s.Key, s.Version}] = resp
	}
	be.wg.Add(1)
	go be.accept()
	return be, nil
}

// Addr is the backend's host:port.
func (be *Backend) Addr() string { return be.ln.Addr().String() }

// Close stops the backend and closes its connections.
func (be *Backend) Close() {
	be.ln.Close()
	be.mu.Lock()
	for c := range be.conns {
		c.Close()
	}
	be.mu.Unlock()
	be.wg.Wait()
}

func (be *Backend) accept() {
	defer be.wg.Done()
	for {
		c, err := be.ln.Accept()
		if err != nil {
			return
		}
		be.mu.Lock()
		be.conns[c] = struct{}{}
		be.mu.Unlock()
		be.wg.Add(1)
		go func() {
			defer be.wg.Done()
			be.serve(c)
			be.mu.Lock()
			delete(be.conns, c)
			be.mu.Unlock()
			c.Close()
		}()
	}
}

var errUnknownRequest = errors.New("relaytest backend: request it has no answer for")

func (be *Backend) serve(c net.Conn) {
	r := bufio.NewReaderSize(c, 64<<10)
	w := bufio.NewWriterSize(c, 64<<10)
	var head [12]byte
	var scratch []byte
	for {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return
		}
		size := int(binary.BigEndian.Uint32(head[:4]))
		key := int16(binary.BigEndian.Uint16(head[4:]))
		ver := int16(binary.BigEndian.Uint16(head[6:]))
		corr := head[8:12]
		resp, ok := be.resps[[2]int16{key, ver}]
		if !ok && (key == 18 || key == 3) {
			// Rare control requests: decode fully and build an answer.
			body := make([]byte, size-8)
			if _, err := io.ReadFull(r, body); err != nil {
				return
			}
			var err error
			if scratch, err = be.control(scratch[:0], key, ver, int32(binary.BigEndian.Uint32(corr)), body); err != nil {
				return
			}
			if _, err := w.Write(scratch); err != nil {
				return
			}
		} else {
			if !ok {
				return // errUnknownRequest: drop the connection
			}
			if _, err := r.Discard(size - 8); err != nil {
				return
			}
			// The canned frame's correlation id is patched as it is
			// written: size, then the id, then the rest.
			w.Write(resp[:4])
			w.Write(corr)
			w.Write(resp[8:])
		}
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

// control answers ApiVersions and Metadata. body is the request after the
// correlation id: client id, then (if flexible) tags, then the body.
func (be *Backend) control(dst []byte, key, ver int16, corr int32, body []byte) ([]byte, error) {
	if len(body) < 2 {
		return nil, errUnknownRequest
	}
	idLen := int(int16(binary.BigEndian.Uint16(body)))
	body = body[2+max(idLen, 0):]
	req := kmsg.RequestForKey(key)
	req.SetVersion(ver)
	if req.IsFlexible() {
		if len(body) < 1 || body[0] != 0 {
			return nil, errUnknownRequest // no header tags expected
		}
		body = body[1:]
	}
	switch key {
	case 18:
		rs := kmsg.NewPtrApiVersionsResponse()
		rs.Version = ver
		for _, k := range []int16{0, 1, 3, 18} {
			ak := kmsg.NewApiVersionsResponseApiKey()
			ak.ApiKey = k
			ak.MaxVersion = kmsg.RequestForKey(k).MaxVersion()
			rs.ApiKeys = append(rs.ApiKeys, ak)
		}
		return appendResponse(dst, corr, rs), nil
	default:
		if err := req.ReadFrom(body); err != nil {
			return nil, err
		}
		rs := kmsg.NewPtrMetadataResponse()
		rs.Version = ver
		br := kmsg.NewMetadataResponseBroker()
		br.NodeID = 0
		br.Host = be.host
		br.Port = be.port
		rs.Brokers = append(rs.Brokers, br)
		rs.ControllerID = 0
		for _, t := range req.(*kmsg.MetadataRequest).Topics {
			rt := kmsg.NewMetadataResponseTopic()
			rt.Topic = t.Topic
			rp := kmsg.NewMetadataResponseTopicPartition()
			rp.Leader = 0
			rp.Replicas = []int32{0}
			rp.ISR = []int32{0}
			rt.Partitions = append(rt.Partitions, rp)
			rs.Topics = append(rs.Topics, rt)
		}
		return appendResponse(dst, corr, rs), nil
	}
}
