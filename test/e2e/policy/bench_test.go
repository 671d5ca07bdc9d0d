package e2epolicy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// fiftyRules is a 50-rule policy of the shapes real ones have; the bench
// producer (client id svc-7-bench) is allowed by rule writers-7.
func fiftyRules() string {
	var b strings.Builder
	b.WriteString("policy:\n  rules:\n    - {name: describe-all, principals: [\"*\"], allow: [describe], topics: [\"*\"]}\n")
	for i := 1; i < 50; i++ {
		switch {
		case i%10 == 0:
			fmt.Fprintf(&b, "    - {name: deny-%d, principals: [\"cidr:10.%d.0.0/16\"], deny: [write], topics: [\"re:^team%d\\\\.secret\"]}\n", i, i, i)
		case i%3 == 0:
			fmt.Fprintf(&b, "    - {name: readers-%d, principals: [\"User:reader-%d\", \"client_id:ro-%d-*\"], allow: [read], topics: [\"team%d.*\"], groups: [\"team%d-*\"]}\n", i, i, i, i, i)
		default:
			fmt.Fprintf(&b, "    - {name: writers-%d, principals: [\"client_id:svc-%d-*\", \"User:svc-%d\"], allow: [write], topics: [\"team%d.*\"]}\n", i, i, i, i)
		}
	}
	b.WriteString("  governance:\n    - {name: durable, produce: {required_acks: all, allowed_compression: [none, snappy, lz4, zstd]}}\n")
	return b.String()
}

// BenchmarkProduceThroughput produces through kproxy to a one-broker
// kfake, without a policy (passthrough: Produce frames are streamed, never
// decoded) and with the 50-rule policy (every Produce is decoded, decided,
// and batch headers read for governance). "batched" lets the producer fill
// large requests with 1 KiB records (throughput); "sync" waits for each
// 100-byte record, one request per round trip (per-request cost). Compare
// the MB/s of the two modes of one shape in one run.
func BenchmarkProduceThroughput(b *testing.B) {
	for _, shape := range []string{"batched", "sync"} {
		for _, mode := range []string{"passthrough", "policy-50-rules"} {
			b.Run(shape+"/"+mode, func(b *testing.B) { benchProduce(b, shape, mode) })
		}
	}
}

func benchProduce(b *testing.B, shape, mode string) {
	c := testkit.Cluster(b, 1, kfake.SeedTopics(1, "team7.bench"))
	yaml := testkit.Config{Upstream: c.ListenAddrs()}.YAML()
	if mode != "passthrough" {
		yaml += fiftyRules()
	}
	p := kproxytest.Start(b, yaml)
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.BootstrapAddr()), kgo.ClientID("svc-7-bench"),
		kgo.DefaultProduceTopic("team7.bench"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("warm-up")}).FirstErr(); err != nil {
		b.Fatal(err)
	}

	if shape == "sync" {
		value := make([]byte, 100)
		b.SetBytes(int64(len(value)))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
				b.Fatal(err)
			}
		}
		return
	}

	value := make([]byte, 1024)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	b.StopTimer()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}
