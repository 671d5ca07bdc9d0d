package testkit

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// Sniffer watches every connection a kgo client opens (install it with
// kgo.Dialer(s.Dial)) and records, from the response bytes the client
// actually reads, every broker address the client is told.
//
// It parses frames itself: the size prefix and request header of each frame
// the client writes (to learn the API key and version of the response it is
// owed, by correlation id), and each response frame it reads. Responses
// that can carry a broker address are decoded with kmsg and their addresses
// read where the API table says they are (protocol.APIs, the one
// definition the rewriter works from too), with none of kproxy's rewrite
// code: a response whose addresses kproxy did not rewrite is caught.
//
// It is safe for concurrent use.
type Sniffer struct {
	apis      *protocol.APITable
	mu        sync.Mutex
	addrs     []SeenAddr
	responses map[int16]int // responses read, by API key
	requests  map[int16]int // requests written, by API key
	errs      []error
	latencies map[int16][]time.Duration
	dialed    map[string]int
}

// SeenAddr is one broker address found in a response the client read.
type SeenAddr struct {
	APIKey  int16
	Version int16
	Field   string // which part of the response, e.g. "Brokers"
	NodeID  int32
	Addr    string // host:port
}

func (a SeenAddr) String() string {
	return fmt.Sprintf("%s v%d %s node %d at %s", protocol.APIName(a.APIKey), a.Version, a.Field, a.NodeID, a.Addr)
}

// NewSniffer returns an empty Sniffer that knows the APIs of protocol.APIs.
func NewSniffer() *Sniffer { return NewSnifferFor(protocol.APIs()) }

// NewSnifferFor returns an empty Sniffer that parses frames and finds
// addresses by the rows of apis.
func NewSnifferFor(apis *protocol.APITable) *Sniffer {
	return &Sniffer{
		apis:      apis,
		responses: map[int16]int{},
		requests:  map[int16]int{},
		latencies: map[int16][]time.Duration{},
		dialed:    map[string]int{},
	}
}

// Dial has the signature kgo.Dialer wants. It dials with a net.Dialer and
// wraps the connection.
func (s *Sniffer) Dial(ctx context.Context, network, host string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, host)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.dialed[host]++
	s.mu.Unlock()
	return &sniffConn{Conn: c, s: s, owed: map[int32]owedResp{}}, nil
}

// Addrs returns every address seen so far.
func (s *Sniffer) Addrs() []SeenAddr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SeenAddr(nil), s.addrs...)
}

// Responses returns how many responses to key the client read.
func (s *Sniffer) Responses(key int16) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.responses[key]
}

// Requests returns how many requests of key the client wrote.
func (s *Sniffer) Requests(key int16) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[key]
}

// Latencies returns, for each response to key, the time from the write of
// its request to the read of its response.
func (s *Sniffer) Latencies(key int16) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.latencies[key]...)
}

// Dialed returns the addresses the client dialed, with counts.
func (s *Sniffer) Dialed() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[string]int, len(s.dialed))
	for k, v := range s.dialed {
		m[k] = v
	}
	return m
}

// Errors returns the frames the sniffer could not parse or decode. A
// non-empty list means the address check is incomplete.
func (s *Sniffer) Errors() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

func (s *Sniffer) fail(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}

// owedResp is what the client asked for with one correlation id.
type owedResp struct {
	key, version int16
	sent         time.Time
}

// sniffConn is one client connection. kgo writes from one goroutine and
// reads from another, so each direction has its own buffer and the owed
// map is locked.
type sniffConn struct {
	net.Conn
	s *Sniffer

	wmu  sync.Mutex
	wbuf []byte // request bytes not yet parsed into a whole frame

	rmu  sync.Mutex
	rbuf []byte // response bytes not yet parsed into a whole frame

	omu  sync.Mutex
	owed map[int32]owedResp
}

// Write records each whole request frame before handing the bytes on, so
// that the response can never be read before its request is known.
func (c *sniffConn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	splitFrames(&c.wbuf, b, c.request)
	c.wmu.Unlock()
	return c.Conn.Write(b)
}

// Read hands the bytes on and parses every response frame they complete.
func (c *sniffConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.rmu.Lock()
		splitFrames(&c.rbuf, b[:n], c.response)
		c.rmu.Unlock()
	}
	return n, err
}

// splitFrames appends b to *buf and hands each whole frame it completes to
// handle, keeping an incomplete one in *buf for the next bytes.
func splitFrames(buf *[]byte, b []byte, handle func(frame []byte)) {
	*buf = append(*buf, b...)
	for {
		frame, rest, ok := nextFrame(*buf)
		if !ok {
			return
		}
		handle(frame)
		*buf = append((*buf)[:0], rest...)
	}
}

// nextFrame splits one whole frame body (without its size prefix) off b.
func nextFrame(b []byte) (frame, rest []byte, ok bool) {
	if len(b) < 4 {
		return nil, b, false
	}
	size := int(binary.BigEndian.Uint32(b))
	if size < 0 || len(b) < 4+size {
		return nil, b, false
	}
	return b[4 : 4+size], b[4+size:], true
}

func (c *sniffConn) request(frame []byte) {
	h, err := c.s.apis.ParseRequestHeader(frame)
	if err != nil {
		c.s.fail(fmt.Errorf("sniffer: request to %s: %w", c.RemoteAddr(), err))
		return
	}
	c.s.mu.Lock()
	c.s.requests[h.APIKey]++
	c.s.mu.Unlock()
	if h.APIKey == wire.ProduceKey {
		acks, err := wire.ProduceAcks(h.APIVersion, frame[h.Len:])
		if err != nil {
			c.s.fail(fmt.Errorf("sniffer: produce request: %w", err))
		} else if acks == 0 {
			return // no response owed
		}
	}
	c.omu.Lock()
	c.owed[h.CorrelationID] = owedResp{key: h.APIKey, version: h.APIVersion, sent: time.Now()}
	c.omu.Unlock()
}

func (c *sniffConn) response(frame []byte) {
	if len(frame) < 4 {
		c.s.fail(fmt.Errorf("sniffer: response from %s: %d-byte frame", c.RemoteAddr(), len(frame)))
		return
	}
	corr := int32(binary.BigEndian.Uint32(frame))
	c.omu.Lock()
	o, ok := c.owed[corr]
	delete(c.owed, corr)
	c.omu.Unlock()
	if !ok {
		c.s.fail(fmt.Errorf("sniffer: response from %s with correlation id %d that no request used", c.RemoteAddr(), corr))
		return
	}
	c.s.mu.Lock()
	c.s.responses[o.key]++
	c.s.latencies[o.key] = append(c.s.latencies[o.key], time.Since(o.sent))
	c.s.mu.Unlock()

	api, ok := c.s.apis.API(o.key)
	if !ok || !api.HasEndpoints() {
		return // no addresses in this response
	}
	body, err := c.s.apis.SkipResponseHeader(o.key, o.version, frame)
	if err != nil {
		c.s.fail(fmt.Errorf("sniffer: %s v%d response header: %w", api.Name, o.version, err))
		return
	}
	resp, err := c.s.apis.DecodeResponse(o.key, o.version, body)
	if err != nil {
		c.s.fail(fmt.Errorf("sniffer: %w", err))
		return
	}
	seen, err := extractAddrs(api, resp)
	if err != nil {
		c.s.fail(fmt.Errorf("sniffer: %w", err))
	}
	c.s.mu.Lock()
	c.s.addrs = append(c.s.addrs, seen...)
	c.s.mu.Unlock()
}

// ResponseAddrs lists every broker address in a decoded response, for
// tests that drive the protocol by hand.
func ResponseAddrs(resp kmsg.Response) []SeenAddr {
	api, ok := protocol.APIs().API(resp.Key())
	if !ok {
		return nil
	}
	addrs, _ := extractAddrs(api, resp)
	return addrs
}

// extractAddrs lists every broker address in a decoded response of api,
// including those kproxy strips rather than rewrites: the sniffer checks
// that they are gone.
func extractAddrs(api protocol.API, resp kmsg.Response) ([]SeenAddr, error) {
	var out []SeenAddr
	err := api.VisitEndpoints(resp, func(e protocol.Endpoint) error {
		host, port := *e.Host, e.Port.Get()
		if host == "" && port <= 0 {
			return nil // "no node" placeholder (e.g. a failed coordinator lookup)
		}
		out = append(out, SeenAddr{
			APIKey: resp.Key(), Version: resp.GetVersion(), Field: e.Field, NodeID: e.NodeID,
			Addr: net.JoinHostPort(host, strconv.Itoa(int(port))),
		})
		return nil
	})
	return out, err
}

// CheckAddrs fails t unless the sniffer saw Metadata and FindCoordinator
// responses, could parse every frame, and every address it saw is kproxy's
// own: the bootstrap address or, for node N, exactly the address kproxy
// serves node N on. upstream lists addresses that must never be seen (the
// cluster's real listeners).
func (s *Sniffer) CheckAddrs(t testing.TB, p interface {
	BootstrapAddr() string
	BrokerAddr(int32) (string, bool)
}, upstream []string) {
	t.Helper()
	for _, err := range s.Errors() {
		t.Errorf("%v", err)
	}
	for _, key := range []int16{wire.MetadataKey, wire.FindCoordinatorKey} {
		if s.Responses(key) == 0 {
			t.Errorf("sniffer saw no %s response: the address check would be vacuous", protocol.APIName(key))
		}
	}
	bad := map[string]bool{}
	for _, u := range upstream {
		bad[u] = true
	}
	for host := range s.Dialed() {
		if bad[host] {
			t.Errorf("client dialed the upstream %s directly", host)
		} else if !isProxyAddr(p, host) {
			t.Errorf("client dialed %s, which is not a kproxy address", host)
		}
	}
	addrs := s.Addrs()
	if len(addrs) == 0 {
		t.Errorf("sniffer saw no broker address at all")
	}
	t.Logf("sniffer: %s", s.Summary())
	reported := 0
	for _, a := range addrs {
		if bad[a.Addr] {
			t.Errorf("client was told an upstream address: %s", a)
			reported++
		} else if want, ok := p.BrokerAddr(a.NodeID); !ok || a.Addr != want {
			t.Errorf("client was told %s, but kproxy serves node %d at %q (known %v)", a, a.NodeID, want, ok)
			reported++
		}
		if reported >= 10 {
			t.Errorf("(further bad addresses not listed)")
			return
		}
	}
}

// isProxyAddr reports whether addr is kproxy's bootstrap address or the
// address it serves some node on. Node ids are looked up from the ones the
// sniffer could have seen: kfake numbers nodes from 0.
func isProxyAddr(p interface {
	BootstrapAddr() string
	BrokerAddr(int32) (string, bool)
}, addr string) bool {
	if addr == p.BootstrapAddr() {
		return true
	}
	for id := int32(0); id < 64; id++ {
		if a, ok := p.BrokerAddr(id); ok && a == addr {
			return true
		}
	}
	return false
}

// Summary says how many addresses were seen in which responses.
func (s *Sniffer) Summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	count := map[string]int{}
	for _, a := range s.addrs {
		count[fmt.Sprintf("%s.%s", s.apis.APIName(a.APIKey), a.Field)]++
	}
	keys := make([]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	b = fmt.Appendf(b, "%d addresses:", len(s.addrs))
	for _, k := range keys {
		b = fmt.Appendf(b, " %s=%d", k, count[k])
	}
	return string(b)
}
