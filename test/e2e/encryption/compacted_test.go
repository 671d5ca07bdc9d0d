package e2eencryption

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// TestCompactedTopicKeepsKeysAndTombstones: in a topic created with
// cleanup.policy=compact, keys are stored in the clear (compaction needs
// them), values encrypted, and a tombstone's null value stays null in the
// cluster and through kproxy, so compaction still deletes the key.
func TestCompactedTopicKeepsKeysAndTombstones(t *testing.T) {
	e := newEnv(t, nil, section(`    - {match: "pay*", key: "alias/kek"}`, ""),
		func(k *localkms.Server) { k.CreateAlias("alias/kek", k.CreateKey()) })
	ctx := e.ctx()
	created, err := kadm.NewClient(e.direct()).CreateTopic(ctx, 1, 1,
		map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, "paycompact")
	if err != nil || created.Err != nil {
		t.Fatalf("create the compacted topic: %v %v", err, created.Err)
	}
	p := e.proxied(kgo.DefaultProduceTopic("paycompact"))
	if err := p.ProduceSync(ctx,
		&kgo.Record{Key: []byte("account-1"), Value: []byte("balance 100")},
		&kgo.Record{Key: []byte("account-1"), Value: nil},
	).FirstErr(); err != nil {
		t.Fatalf("produce a value and a tombstone: %v", err)
	}
	stored := testkit.Consume(t, ctx, e.direct(kgo.ConsumeTopics("paycompact")), 2)
	for _, r := range stored {
		if string(r.Key) != "account-1" {
			t.Errorf("record at offset %d stored with key %q, want it in the clear", r.Offset, r.Key)
		}
	}
	if _, ok := marker(t, stored[0]); !ok || bytes.Contains(stored[0].Value, []byte("balance")) {
		t.Errorf("value stored as %q, want it encrypted", stored[0].Value)
	}
	if stored[1].Value != nil {
		t.Errorf("tombstone stored with value %q, want null", stored[1].Value)
	}
	got := testkit.Consume(t, ctx, e.proxied(kgo.ConsumeTopics("paycompact")), 2)
	if string(got[0].Key) != "account-1" || string(got[0].Value) != "balance 100" {
		t.Errorf("read back %q=%q", got[0].Key, got[0].Value)
	}
	if string(got[1].Key) != "account-1" || got[1].Value != nil {
		t.Errorf("tombstone read back as %q=%q, want a null value", got[1].Key, got[1].Value)
	}
}
