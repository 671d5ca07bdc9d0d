package e2eencryption

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// TestLargeBatchesRoundTrip: partitions of hundreds of kilobytes, which
// kproxy seals into buffers it reuses and writes upstream without copying
// them into the request, are stored sealed and read back as written,
// request after request.
func TestLargeBatchesRoundTrip(t *testing.T) {
	e := newEnv(t, []string{"bulk"}, section(`    - {match: "bulk", key: "alias/kek", encrypt: [value]}`, ""),
		func(k *localkms.Server) { k.CreateAlias("alias/kek", k.CreateKey()) })
	ctx := e.ctx()
	const perRound, rounds = 600, 4
	value := func(i int) []byte {
		return append(fmt.Appendf(nil, "secret-%d-", i), bytes.Repeat([]byte{byte('a' + i%26)}, 1000)...)
	}
	p := e.proxied(kgo.DefaultProduceTopic("bulk"), kgo.ProducerLinger(0), kgo.ProducerBatchMaxBytes(1<<20))
	for round := range rounds {
		var recs []*kgo.Record
		for i := round * perRound; i < (round+1)*perRound; i++ {
			recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "%d", i), Value: value(i)})
		}
		if err := p.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("round %d: produce through kproxy: %v", round, err)
		}
	}
	got := testkit.Consume(t, ctx, e.proxied(kgo.ConsumeTopics("bulk")), perRound*rounds)
	seen := map[string]bool{}
	for _, r := range got {
		var i int
		if _, err := fmt.Sscanf(string(r.Key), "%d", &i); err != nil || !bytes.Equal(r.Value, value(i)) || seen[string(r.Key)] {
			t.Fatalf("record %q read back as %.40q (seen before: %v)", r.Key, r.Value, seen[string(r.Key)])
		}
		seen[string(r.Key)] = true
	}
	for _, r := range testkit.Consume(t, ctx, e.direct(kgo.ConsumeTopics("bulk")), perRound*rounds) {
		if bytes.Contains(r.Value, []byte("secret")) {
			t.Fatalf("stored record %q holds its plaintext", r.Key)
		}
	}
}
