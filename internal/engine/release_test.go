package engine

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/bench/relaytest"
	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/wire"
)

// releasingFilter replaces each produced partition's records by a copy
// and asks for the copies back with Verdict.Release; hook adds a
// response hook, which may read the request when the response comes.
type releasingFilter struct {
	hook     bool
	released atomic.Int32
	requests atomic.Int32
}

func (f *releasingFilter) Register(r *filter.Registry) { filter.OnRequest(r, f.produce) }

func (f *releasingFilter) produce(_ *filter.Conn, req *kmsg.ProduceRequest) filter.Verdict {
	f.requests.Add(1)
	for ti := range req.Topics {
		for pi := range req.Topics[ti].Partitions {
			p := &req.Topics[ti].Partitions[pi]
			p.Records = slices.Clone(p.Records)
		}
	}
	v := filter.Verdict{Modified: true, Release: func() { f.released.Add(1) }}
	if f.hook {
		v.OnResponse = func(kmsg.Response) error { return nil }
	}
	return v
}

// A modified request's Release is called once per request, once it is
// encoded, and never while a response hook may still read the request.
func TestReleaseAfterEncoding(t *testing.T) {
	be, err := relaytest.NewBackend(relaytest.Produce64K)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.Close)
	const n = 20
	for name, tc := range map[string]struct {
		f    *releasingFilter
		want int32
	}{
		"no hook":   {&releasingFilter{}, n},
		"with hook": {&releasingFilter{hook: true}, 0},
	} {
		s := startBenchProxy(t, be.Addr(), WithFilters(tc.f))
		if err := relaytest.Check(s.BootstrapAddr(), relaytest.Produce64K, n); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, reqs := tc.f.released.Load(), tc.f.requests.Load(); got != tc.want || reqs != n {
			t.Errorf("%s: released %d times for %d requests, want %d", name, got, reqs, tc.want)
		}
	}
}

// releasingFetchFilter puts records of its own, all fill bytes, into each
// fetched partition with filter.OnResponseReleasing; its release
// scribbles over them, as a filter reusing the buffer for the next
// response would.
type releasingFetchFilter struct {
	released atomic.Int32
	handled  atomic.Int32
}

const fetchFill, fetchScribble = 0xab, 0xcd

func (f *releasingFetchFilter) Register(r *filter.Registry) {
	filter.OnResponseReleasing(r, f.fetch)
}

func (f *releasingFetchFilter) fetch(resp *kmsg.FetchResponse) (func(), error) {
	f.handled.Add(1)
	var bufs [][]byte
	for ti := range resp.Topics {
		for pi := range resp.Topics[ti].Partitions {
			p := &resp.Topics[ti].Partitions[pi]
			p.RecordBatches = bytes.Repeat([]byte{fetchFill}, len(p.RecordBatches))
			bufs = append(bufs, p.RecordBatches)
		}
	}
	return func() {
		for _, b := range bufs {
			for i := range b {
				b[i] = fetchScribble
			}
		}
		f.released.Add(1)
	}, nil
}

// A response handler's release is called once per response, after the
// response is written: the client gets the records the handler put in,
// not what its release later wrote over them.
func TestResponseReleaseAfterWrite(t *testing.T) {
	be, err := relaytest.NewBackend(relaytest.Fetch1M)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.Close)
	f := &releasingFetchFilter{}
	s := startBenchProxy(t, be.Addr(), WithFilters(f))
	conn, err := net.Dial("tcp", s.BootstrapAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req, _ := relaytest.Fetch1M.Frames()
	const n = 5
	for i := range n {
		binary.BigEndian.PutUint32(req[8:], uint32(i+1))
		if _, err := conn.Write(req); err != nil {
			t.Fatal(err)
		}
		var size [4]byte
		if _, err := io.ReadFull(conn, size[:]); err != nil {
			t.Fatal(err)
		}
		frame := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(conn, frame); err != nil {
			t.Fatal(err)
		}
		body, err := wire.SkipResponseHeader(relaytest.Fetch1M.Key, relaytest.Fetch1M.Version, frame)
		if err != nil {
			t.Fatal(err)
		}
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = relaytest.Fetch1M.Version
		if err := resp.ReadFrom(body); err != nil {
			t.Fatal(err)
		}
		got := resp.Topics[0].Partitions[0].RecordBatches
		if len(got) != relaytest.Fetch1M.ResponseRecords || bytes.Count(got, []byte{fetchFill}) != len(got) {
			t.Fatalf("response %d: %d bytes of records, %d of them the handler's, want all %d", i+1, len(got), bytes.Count(got, []byte{fetchFill}), relaytest.Fetch1M.ResponseRecords)
		}
	}
	// The last release may run just after its response reached us.
	deadline := time.Now().Add(5 * time.Second)
	for f.released.Load() != n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got, handled := f.released.Load(), f.handled.Load(); got != n || handled != n {
		t.Errorf("released %d times for %d responses handled, want %d", got, handled, n)
	}
}
