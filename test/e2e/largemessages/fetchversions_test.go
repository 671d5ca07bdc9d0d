package e2elargemessages

import (
	"fmt"

	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestStreamedValueAtEveryFetchVersion: a value kproxy streams into the
// response (above 4 MiB) arrives whole at old Fetch versions, whose
// records length is an int32 (v4 to v11), and at the flexible ones, whose
// length is a compact varint (v12 on): a client pinned to each version,
// on a connection of its own, decodes the record with the value's
// SHA-256.
func TestStreamedValueAtEveryFetchVersion(t *testing.T) {
	e := newEnv(t, []string{"media.clips"}, section(`    - {match: "media.*", threshold_bytes: 1048576}`, ""))
	ctx := e.ctx()
	sent := value(9, 5<<20+123)
	if err := e.proxied().ProduceSync(ctx, &kgo.Record{Topic: "media.clips", Key: []byte("clip"), Value: sent}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	meta := kmsg.NewPtrMetadataRequest()
	meta.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("media.clips")}}
	mresp, err := meta.RequestWith(ctx, e.proxied())
	if err != nil {
		t.Fatal(err)
	}
	id := mresp.Topics[0].TopicID
	newest := (&kmsg.FetchRequest{}).MaxVersion()
	for _, version := range []int16{4, 7, 11, 12, 13, newest} {
		req := testkit.FetchByName(version, "media.clips")
		if version >= 13 {
			req = testkit.FetchByID(version, id)
		}
		req.MaxBytes, req.Topics[0].Partitions[0].PartitionMaxBytes = 16<<20, 16<<20
		conn := testkit.DialRaw(t, e.kp.Bootstrap, fmt.Sprintf("fetch-v%d", version))
		resp := conn.MustRoundTrip(t, req).(*kmsg.FetchResponse)
		p := &resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			t.Fatalf("Fetch v%d: partition error %d", version, p.ErrorCode)
		}
		fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Topic: "media.clips"}, p, kgo.DefaultDecompressor(), nil)
		if fp.Err != nil {
			t.Fatalf("Fetch v%d: the records do not decode: %v", version, fp.Err)
		}
		if len(fp.Records) != 1 || digest(fp.Records[0].Value) != digest(sent) || string(fp.Records[0].Key) != "clip" {
			t.Fatalf("Fetch v%d: %d records, want the one sent byte for byte", version, len(fp.Records))
		}
	}
	if got := e.metric(`kproxy_large_messages_objects_total{operation="resolve"}`); got != 6 {
		t.Errorf("objects resolved = %v, want one per fetch (6)", got)
	}
}
