package largemessage

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// A produce whose last batch claims more bytes than the request holds is
// malformed. The record rewriter passes such a partial batch on unread (a
// Fetch response may end with one), so the filter must refuse it: a value
// above the threshold must never reach the cluster un-offloaded.
//
// At a threshold the whole batch's records area stays under, the partial
// batch is the only reason to read the request: the raw decision must
// not forward it either.
func TestPartialProduceBatchRefused(t *testing.T) {
	for _, threshold := range []int64{10, 1000} {
		store := &memStore{putsOK: -1}
		f := newTestFilter(t, store, threshold)
		whole := batch(0, 0, 7, testRecord{key: []byte("small"), value: []byte("tiny")})
		partial := batch(1, 0, 7, testRecord{key: []byte("big"), value: bytes.Repeat([]byte("b"), 100)})
		binary.BigEndian.PutUint32(partial[8:], binary.BigEndian.Uint32(partial[8:])+1) // one byte more than sent
		req := produceRequest("media.x", append(whole, partial...))
		if v, decided := f.produceRaw(&filter.Conn{}, req.Version, req.AppendTo(nil)); decided {
			t.Errorf("threshold %d: decided from the raw request (%+v), want it read", threshold, v)
		}
		v := f.produce(&filter.Conn{}, req)
		resp, isResp := v.Respond.(*kmsg.ProduceResponse)
		if !isResp || resp.Topics[0].Partitions[0].ErrorCode != kerr.CorruptMessage.Code {
			t.Fatalf("threshold %d: verdict %+v, want the partition refused with CORRUPT_MESSAGE", threshold, v)
		}
		waitObjects(t, store, 0)
	}
}
