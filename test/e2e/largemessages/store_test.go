package e2elargemessages

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/seaweed"
)

// TestStoreDownProduceRetriesAndRecovers: with the store stopped, an
// idempotent producer's large record is refused retriably (counted as
// store_unavailable) and retried; once the store is back on the same port
// and data, the record is acknowledged, and a consumer reads every
// acknowledged record exactly once, in order.
func TestStoreDownProduceRetriesAndRecovers(t *testing.T) {
	e := newEnv(t, []string{"media.down"}, section(`    - {match: "media.*", threshold_bytes: 1048576}`, ""))
	ctx := e.ctx()
	p := e.proxied(kgo.DefaultProduceTopic("media.down"))
	sent := [][]byte{value(1, 2<<20), []byte("small-1"), value(2, 3<<20), []byte("small-2")}
	if err := p.ProduceSync(ctx, &kgo.Record{Value: sent[0]}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	e.store.Stop()
	done := make(chan error, 1)
	go func() {
		done <- p.ProduceSync(ctx, &kgo.Record{Value: sent[1]}, &kgo.Record{Value: sent[2]}, &kgo.Record{Value: sent[3]}).FirstErr()
	}()
	failures := `kproxy_large_messages_failures_total{operation="offload",partition="0",reason="store_unavailable",topic="media.down"}`
	deadline := time.Now().Add(60 * time.Second)
	for e.metric(failures) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("no produce refused as store_unavailable while the store was down")
		}
		select {
		case err := <-done:
			t.Fatalf("produce ended while the store was down: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	e.store.Restart()
	if err := <-done; err != nil {
		t.Fatalf("produce after the store came back: %v", err)
	}
	got := testkit.Consume(t, ctx, e.proxied(kgo.ConsumeTopics("media.down")), len(sent))
	for i, r := range got {
		if digest(r.Value) != digest(sent[i]) {
			t.Errorf("record %d: %d bytes, want the %d bytes sent", i, len(r.Value), len(sent[i]))
		}
	}
	if extra := e.proxied(kgo.ConsumeTopics("media.down")).PollRecords(testkit.Context(t, 3*time.Second), 100).Records(); len(extra) != len(sent) {
		t.Errorf("a fresh consumer read %d records, want exactly the %d acknowledged", len(extra), len(sent))
	}
}

// TestMissingObjectIsInvalidRecord: a pointer whose object was deleted
// gives its partition INVALID_RECORD, never a wrong or empty value, with
// the failure counted and logged with the record's offset.
func TestMissingObjectIsInvalidRecord(t *testing.T) {
	e := newEnv(t, []string{"media.gone"}, section(`    - {match: "media.*", threshold_bytes: 1048576}`, ""))
	ctx := e.ctx()
	p := e.proxied(kgo.DefaultProduceTopic("media.gone"))
	if err := p.ProduceSync(ctx, &kgo.Record{Key: []byte("doomed"), Value: value(3, 2<<20)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	keys := e.objects("default/media.gone/")
	if len(keys) != 1 {
		t.Fatalf("bucket holds %v, want one object", keys)
	}
	if _, err := e.store.Admin.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(seaweed.Bucket), Key: aws.String(keys[0])}); err != nil {
		t.Fatal(err)
	}
	c := e.proxied(kgo.ConsumeTopics("media.gone"))
	fetchErr := firstFetchError(t, ctx, c)
	if !errors.Is(fetchErr, kerr.InvalidRecord) {
		t.Fatalf("fetch error %v, want INVALID_RECORD", fetchErr)
	}
	if got := e.metric(`kproxy_large_messages_failures_total{operation="resolve",partition="0",reason="missing",topic="media.gone"}`); got < 1 {
		t.Errorf("resolve failures (missing) = %v, want at least 1", got)
	}
	line := e.kp.WaitLog("the resolve failure", testkit.MessagePrefix("fetched pointer could not be resolved"))
	if line["offset"] != float64(0) || line["topic"] != "media.gone" || !strings.Contains(line["error"].(string), keys[0]) {
		t.Errorf("log line %v: want topic media.gone, offset 0 and the object's key", line)
	}
}

// firstFetchError polls cl until a fetch error, failing on a record.
func firstFetchError(t *testing.T, ctx context.Context, cl *kgo.Client) error {
	t.Helper()
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("no fetch error: %v", err)
		}
		if rs := fs.Records(); len(rs) > 0 {
			t.Fatalf("consumer got a record of %d bytes, want an error", len(rs[0].Value))
		}
		for _, fe := range fs.Errors() {
			return fe.Err
		}
	}
}
