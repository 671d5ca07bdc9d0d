package e2eencryption

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// TestKMSDownRefusesRetriablyThenRecovers: while the KMS is down, an
// idempotent producer's records for an encrypted topic are refused with
// REQUEST_TIMED_OUT (never stored in the clear) and retried, another
// topic is served throughout, and once the KMS is back every
// acknowledged record is stored exactly once, encrypted.
func TestKMSDownRefusesRetriablyThenRecovers(t *testing.T) {
	e := newEnv(t, []string{"paydown", "plain"}, section(`    - {match: "pay*", key: "alias/kek"}`, ""),
		func(k *localkms.Server) { k.CreateAlias("alias/kek", k.CreateKey()) })
	e.kms.Stop()
	ctx := e.ctx()
	const n = 20
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, kgo.StringRecord(fmt.Sprintf("secret-%d", i)))
	}
	p := e.proxied(kgo.DefaultProduceTopic("paydown"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(1000),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }))
	produced := make(chan error, 1)
	go func() { produced <- p.ProduceSync(ctx, recs...).FirstErr() }()

	e.kp.WaitLog("a refusal naming the KMS", func(l testkit.LogLine) bool {
		return l["filter"] == "encryption" && l["error_code"] == kerr.RequestTimedOut.Message && l["topic"] == "paydown"
	})
	for i := range 3 { // the other topic is served while the KMS is down
		if err := e.proxied(kgo.DefaultProduceTopic("plain")).ProduceSync(ctx, kgo.StringRecord("clear")).FirstErr(); err != nil {
			t.Fatalf("produce %d to a topic without encryption while the KMS is down: %v", i, err)
		}
	}
	select {
	case err := <-produced:
		t.Fatalf("produce to an encrypted topic finished while the KMS is down: %v", err)
	case <-time.After(time.Second):
	}
	if stored := storedCount(t, e, "paydown"); stored != 0 {
		t.Fatalf("%d records stored while the KMS was down", stored)
	}

	e.kms.Restart()
	if err := <-produced; err != nil {
		t.Fatalf("produce once the KMS is back: %v", err)
	}
	got := testkit.Consume(t, ctx, e.proxied(kgo.ConsumeTopics("paydown")), n)
	seen := map[string]int{}
	for _, r := range got {
		seen[string(r.Value)]++
	}
	for i := range n {
		if c := seen[fmt.Sprintf("secret-%d", i)]; c != 1 {
			t.Errorf("record secret-%d consumed %d times, want once", i, c)
		}
	}
	if stored := storedCount(t, e, "paydown"); stored != n {
		t.Errorf("%d records stored, want %d", stored, n)
	}
}

// storedCount is how many records partition 0 of topic holds, read
// directly from the cluster; none may be in the clear.
func storedCount(t *testing.T, e *env, topic string) int {
	t.Helper()
	cl := e.direct(kgo.ConsumeTopics(topic), kgo.FetchMaxWait(200*time.Millisecond))
	ctx := testkit.Context(t, time.Second)
	count := 0
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return count
		}
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, ctx.Err()) && !strings.Contains(err.Error(), "context") {
				t.Fatalf("direct fetch of %s: %v", topic, err)
			}
		})
		for _, r := range fs.Records() {
			if _, ok := marker(t, r); !ok {
				t.Fatalf("%s holds a record in the clear: %q", topic, r.Value)
			}
			count++
		}
	}
}
