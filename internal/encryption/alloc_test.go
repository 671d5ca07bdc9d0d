package encryption

import (
	"context"
	"fmt"
	"testing"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/encryption/encryptionconfig"
	"github.com/kproxy/kproxy/internal/kms"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// TestNoAllocationsPerRecord: in steady state (the DEK fetched and
// cached), encrypting a produce partition and decrypting it back cost
// allocations per partition, never per record: a batch of 500 records
// allocates what a batch of 1 does. The KMS is local-kms, called through
// the AWS provider.
func TestNoAllocationsPerRecord(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what allocates, and sync.Pool drops items under it")
	}
	k := localkms.Start(t)
	k.CreateAlias("alias/kek", k.CreateKey())
	provider, err := kms.NewAWS(context.Background(), kms.AWSConfig{Endpoint: k.Endpoint(), Region: localkms.Region, Credentials: localkms.Credentials()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &encryptionconfig.Config{Topics: []encryptionconfig.TopicRule{{Match: "*", Key: "alias/kek", Encrypt: []string{"value", "headers"}}}}
	f, err := New(cfg, Options{Env: filter.Env{Log: zerolog.Nop()}, Provider: provider})
	if err != nil {
		t.Fatal(err)
	}
	allocs := func(n int) (produce, fetch float64) {
		values := make([]string, n)
		for i := range values {
			values[i] = fmt.Sprintf("value-%d", i)
		}
		src := testkit.RecordBatch(values...)
		req := testkit.ProduceByName(9, -1, src, "orders")
		topics := req.Topics
		var sealed []byte
		produce = testing.AllocsPerRun(50, func() {
			req.Topics = topics[:1]
			req.Topics[0].Partitions[0].Records = src
			if v := f.produce(&filter.Conn{}, req); v.Respond != nil || v.Close != nil {
				t.Fatalf("produce refused: %+v", v)
			}
			sealed = req.Topics[0].Partitions[0].Records
		})
		resp := kmsg.NewPtrFetchResponse()
		resp.Topics = []kmsg.FetchResponseTopic{{Topic: "orders", Partitions: []kmsg.FetchResponseTopicPartition{{}}}}
		fetch = testing.AllocsPerRun(50, func() {
			resp.Topics[0].Partitions[0].RecordBatches = sealed
			release, err := f.fetch(resp)
			if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
				t.Fatalf("fetch: %v, code %d", err, resp.Topics[0].Partitions[0].ErrorCode)
			}
			if release != nil {
				release() // as the engine does once it has written the response
			}
		})
		return produce, fetch
	}
	allocs(500) // warm the DEK cache and the rewriters' buffers
	p1, f1 := allocs(1)
	p500, f500 := allocs(500)
	t.Logf("allocations per call: produce %v (1 record) %v (500 records); fetch %v / %v", p1, p500, f1, f500)
	if p500 > p1+2 || f500 > f1+2 {
		t.Errorf("allocations grow with the records: produce %v -> %v, fetch %v -> %v for 1 -> 500 records", p1, p500, f1, f500)
	}
}
