package engine

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/bench/relaytest"
	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/wire"
)

// fetchHookFilter hooks every Fetch request's response, as a filter that
// carries the request's limits to its response does, and says from the
// raw response whether the hook has work (wants).
type fetchHookFilter struct {
	wants               bool
	inspected, hooked   atomic.Int32
	sawRecords, sawResp atomic.Bool
}

func (f *fetchHookFilter) Register(r *filter.Registry) { filter.OnRequest(r, f.fetch) }

func (f *fetchHookFilter) fetch(*filter.Conn, *kmsg.FetchRequest) filter.Verdict {
	return filter.Verdict{
		InspectResponse: func(version int16, body []byte) bool {
			f.inspected.Add(1)
			if found, err := wire.AnyFetchRecords(version, body, func(recs []byte) bool { return len(recs) == relaytest.Fetch1M.ResponseRecords }); found && err == nil {
				f.sawRecords.Store(true)
			}
			return f.wants
		},
		OnResponse: filter.Then(func(resp *kmsg.FetchResponse) error {
			f.hooked.Add(1)
			f.sawResp.Store(len(resp.Topics) == 1)
			return nil
		}),
	}
}

// A response hook whose inspection finds no work is not called, and the
// response reaches the client byte for byte as the upstream sent it,
// never decoded (a decoded and re-encoded one would be called and could
// differ); one whose inspection finds work sees the decoded response.
func TestHookInspectionForwardsIdleResponsesAsRead(t *testing.T) {
	be, err := relaytest.NewBackend(relaytest.Fetch1M)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.Close)
	req, want := relaytest.Fetch1M.Frames()
	const n = 5
	for _, wants := range []bool{false, true} {
		f := &fetchHookFilter{wants: wants}
		s := startBenchProxy(t, be.Addr(), WithFilters(f))
		conn, err := net.Dial("tcp", s.BootstrapAddr())
		if err != nil {
			t.Fatal(err)
		}
		identical := 0
		for i := int32(1); i <= n; i++ {
			binary.BigEndian.PutUint32(req[8:], uint32(i))
			binary.BigEndian.PutUint32(want[4:], uint32(i))
			if _, err := conn.Write(req); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(want))
			if _, err := io.ReadFull(conn, got[:4]); err != nil {
				t.Fatal(err)
			}
			if size := int(binary.BigEndian.Uint32(got)) + 4; size != len(want) {
				got = make([]byte, size)
				binary.BigEndian.PutUint32(got, uint32(size-4))
			}
			if _, err := io.ReadFull(conn, got[4:]); err != nil {
				t.Fatal(err)
			}
			if bytes.Equal(got, want) {
				identical++
			}
		}
		conn.Close()
		if got := f.inspected.Load(); got != n || !f.sawRecords.Load() {
			t.Errorf("wants %v: %d of %d responses inspected (saw their records: %v)", wants, got, n, f.sawRecords.Load())
		}
		wantHooked := int32(0)
		if wants {
			wantHooked = n
			if !f.sawResp.Load() {
				t.Errorf("wants %v: the hook did not see the decoded response", wants)
			}
		}
		if got := f.hooked.Load(); got != wantHooked {
			t.Errorf("wants %v: hook called %d times, want %d", wants, got, wantHooked)
		}
		if !wants && identical != n {
			t.Errorf("idle hook: %d of %d responses forwarded byte-identical", identical, n)
		}
	}
}
