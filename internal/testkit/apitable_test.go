package testkit

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/testkit/tcppeer"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
	"github.com/kproxy/kproxy/rewrite"
)

// The test below adds one row to the API table, for an API no one knows,
// and shows that the address rewriter and the sniffer both serve it with
// no change of their own: what an API carrying addresses costs is its row.

// fakeKey is an API key neither Kafka nor kmsg uses.
const fakeKey int16 = 1000

// fakeLeadersResponse is a made-up response with a list of broker
// endpoints. Its v0 encoding is an int32 count, then per leader an int32
// node id, an int16-length host and an int32 port.
type fakeLeadersResponse struct {
	Version int16
	Leaders []fakeLeader
}

type fakeLeader struct {
	NodeID int32
	Host   string
	Port   int32
}

func (*fakeLeadersResponse) Key() int16                { return fakeKey }
func (*fakeLeadersResponse) MaxVersion() int16         { return 0 }
func (r *fakeLeadersResponse) SetVersion(v int16)      { r.Version = v }
func (r *fakeLeadersResponse) GetVersion() int16       { return r.Version }
func (*fakeLeadersResponse) IsFlexible() bool          { return false }
func (*fakeLeadersResponse) RequestKind() kmsg.Request { return &fakeLeadersRequest{} }

func (r *fakeLeadersResponse) AppendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(r.Leaders)))
	for _, l := range r.Leaders {
		b = binary.BigEndian.AppendUint32(b, uint32(l.NodeID))
		b = binary.BigEndian.AppendUint16(b, uint16(len(l.Host)))
		b = append(b, l.Host...)
		b = binary.BigEndian.AppendUint32(b, uint32(l.Port))
	}
	return b
}

func (r *fakeLeadersResponse) ReadFrom(b []byte) error {
	short := fmt.Errorf("fake leaders response: short")
	if len(b) < 4 {
		return short
	}
	n := int(binary.BigEndian.Uint32(b))
	b = b[4:]
	r.Leaders = nil
	for range n {
		if len(b) < 6 {
			return short
		}
		l := fakeLeader{NodeID: int32(binary.BigEndian.Uint32(b))}
		hostLen := int(binary.BigEndian.Uint16(b[4:]))
		b = b[6:]
		if len(b) < hostLen+4 {
			return short
		}
		l.Host, l.Port = string(b[:hostLen]), int32(binary.BigEndian.Uint32(b[hostLen:]))
		b = b[hostLen+4:]
		r.Leaders = append(r.Leaders, l)
	}
	if len(b) != 0 {
		return fmt.Errorf("fake leaders response: %d bytes left over", len(b))
	}
	return nil
}

// fakeLeadersRequest is the request it answers: an empty body.
type fakeLeadersRequest struct{ Version int16 }

func (*fakeLeadersRequest) Key() int16                  { return fakeKey }
func (*fakeLeadersRequest) MaxVersion() int16           { return 0 }
func (r *fakeLeadersRequest) SetVersion(v int16)        { r.Version = v }
func (r *fakeLeadersRequest) GetVersion() int16         { return r.Version }
func (*fakeLeadersRequest) IsFlexible() bool            { return false }
func (*fakeLeadersRequest) AppendTo(b []byte) []byte    { return b }
func (*fakeLeadersRequest) ResponseKind() kmsg.Response { return &fakeLeadersResponse{} }
func (*fakeLeadersRequest) ReadFrom(b []byte) error {
	if len(b) != 0 {
		return fmt.Errorf("fake leaders request: body not empty")
	}
	return nil
}

// fakeLeadersRow is the one row the fake API needs.
func fakeLeadersRow() protocol.API {
	return protocol.API{
		Key:         fakeKey,
		Name:        "FakeLeaders",
		NewRequest:  func() kmsg.Request { return &fakeLeadersRequest{} },
		NewResponse: func() kmsg.Response { return &fakeLeadersResponse{} },
		Endpoints: []wire.EndpointList{wire.ListOf("Leaders",
			func(r *fakeLeadersResponse) []fakeLeader { return r.Leaders },
			func(l *fakeLeader) protocol.Endpoint {
				return protocol.Endpoint{NodeID: l.NodeID, Host: &l.Host, Port: wire.Int32Port(&l.Port)}
			})},
	}
}

// proxyMapper hands out node N at proxy.test:19000+N.
type proxyMapper struct{}

func (proxyMapper) MapBroker(nodeID int32, _ string, _ int32) (string, int32, error) {
	return "proxy.test", 19000 + nodeID, nil
}

func upstreamLeaders() *fakeLeadersResponse {
	return &fakeLeadersResponse{Leaders: []fakeLeader{{1, "10.9.8.1", 9092}, {2, "10.9.8.2", 9092}}}
}

func TestAPITableRowDrivesRewriterAndSniffer(t *testing.T) {
	if _, ok := protocol.APIs().API(fakeKey); ok {
		t.Fatalf("key %d is in the built-in table; pick an unused one", fakeKey)
	}
	apis, err := protocol.APIs().With(fakeLeadersRow())
	if err != nil {
		t.Fatal(err)
	}

	// The rewriter: it registers for the key, decodes it, rewrites it.
	rewriter := rewrite.Addresses{Mapper: proxyMapper{}, APIs: apis}
	if !slices.Contains(rewriter.ResponseKeys(), fakeKey) {
		t.Errorf("ResponseKeys() = %v: no key %d", rewriter.ResponseKeys(), fakeKey)
	}
	if need := rewriter.ResponseNeed(fakeKey, 0); need != filter.Decode {
		t.Errorf("ResponseNeed(%d, 0) = %v, want Decode", fakeKey, need)
	}
	rewritten := upstreamLeaders()
	if err := rewriter.FilterResponse(rewritten); err != nil {
		t.Fatalf("FilterResponse: %v", err)
	}
	want := []fakeLeader{{1, "proxy.test", 19001}, {2, "proxy.test", 19002}}
	if !slices.Equal(rewritten.Leaders, want) {
		t.Errorf("rewritten leaders = %+v, want %+v", rewritten.Leaders, want)
	}
	// Without the row the same filter refuses the response: the row is
	// what it works from.
	if err := (rewrite.Addresses{Mapper: proxyMapper{}}).FilterResponse(upstreamLeaders()); err == nil {
		t.Error("the built-in table's rewriter accepted the fake response")
	}

	// The sniffer: over a real socket, it finds the upstream addresses in
	// the raw response and the proxy's in the rewritten one.
	addr := serveFakeLeaders(t, upstreamLeaders(), rewritten)
	s := NewSnifferFor(apis)
	exchangeFakeLeaders(t, s, addr, 2)
	if errs := s.Errors(); len(errs) > 0 {
		t.Fatalf("sniffer errors: %v", errs)
	}
	var got []string
	for _, a := range s.Addrs() {
		if a.APIKey != fakeKey || a.Field != "Leaders" {
			t.Errorf("address %v: want key %d, field Leaders", a, fakeKey)
		}
		got = append(got, fmt.Sprintf("%d@%s", a.NodeID, a.Addr))
	}
	wantSeen := []string{"1@10.9.8.1:9092", "2@10.9.8.2:9092", "1@proxy.test:19001", "2@proxy.test:19002"}
	if !slices.Equal(got, wantSeen) {
		t.Errorf("sniffer saw %v, want %v", got, wantSeen)
	}
}

// serveFakeLeaders answers, on each connection (the tests make one), a
// request per response in order.
func serveFakeLeaders(t *testing.T, responses ...kmsg.Response) string {
	t.Helper()
	return tcppeer.Serve(t, func(c net.Conn) {
		for _, resp := range responses {
			frame, err := readFrame(c)
			if err != nil {
				return
			}
			corr := int32(binary.BigEndian.Uint32(frame[4:]))
			if _, err := c.Write(protocol.AppendResponseFrame(nil, corr, resp)); err != nil {
				return
			}
		}
	})
}

// exchangeFakeLeaders sends n fake requests through the sniffer and reads
// their responses.
func exchangeFakeLeaders(t *testing.T, s *Sniffer, addr string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := s.Dial(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	for corr := range int32(n) {
		req := protocol.AppendRequestFrame(nil, protocol.RequestHeader{CorrelationID: corr, ClientID: "fake"}, &fakeLeadersRequest{})
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := readFrame(c); err != nil {
			t.Fatal(err)
		}
	}
}

// readFrame reads one size-prefixed frame and returns its body.
func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err := io.ReadFull(r, b)
	return b, err
}
