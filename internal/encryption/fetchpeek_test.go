package encryption

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/testkit"
)

// TestFetchDecodedOnlyWhenItMayHoldEnvelopes: a flexible Fetch response
// whose partitions hold only uncompressed batches without the marker is
// left raw (relayed as it came); one with a sealed batch in any partition,
// or a compressed batch, is decoded; older versions always are.
func TestFetchDecodedOnlyWhenItMayHoldEnvelopes(t *testing.T) {
	f := benchFilter(t)
	plain := testkit.RecordBatch("one", "two")
	req := testkit.ProduceByName(9, -1, plain, "orders")
	if v := f.produce(&filter.Conn{}, req); v.Respond != nil || v.Close != nil {
		t.Fatalf("produce refused: %+v", v)
	}
	sealed := req.Topics[0].Partitions[0].Records
	lz4 := testkit.CompressedBatch(t, kgo.Lz4Compression(), "one", "two")
	body := func(version int16, partitions ...[]byte) []byte {
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(version)
		t := kmsg.FetchResponseTopic{Topic: "orders"}
		for i, p := range partitions {
			t.Partitions = append(t.Partitions, kmsg.FetchResponseTopicPartition{Partition: int32(i), RecordBatches: p})
		}
		resp.Topics = []kmsg.FetchResponseTopic{t}
		return resp.AppendTo(nil)
	}
	for _, c := range []struct {
		name       string
		version    int16
		partitions [][]byte
		want       bool
	}{
		{"plain", 16, [][]byte{plain, append(append([]byte(nil), plain...), plain...), nil}, false},
		{"sealed in the second partition", 16, [][]byte{plain, sealed}, true},
		{"sealed after a plain batch", 12, [][]byte{append(append([]byte(nil), plain...), sealed...)}, true},
		{"lz4", 16, [][]byte{lz4}, true},
	} {
		if got := fetchWantsDecoding(c.version, body(c.version, c.partitions...)); got != c.want {
			t.Errorf("%s: decode %v, want %v", c.name, got, c.want)
		}
	}
	if fetchNeed(11) != filter.Decode || fetchNeed(12) != filter.Inspect {
		t.Errorf("Fetch v11 needs %v, v12 %v: want Decode, then Inspect", fetchNeed(11), fetchNeed(12))
	}
}
