package conformance

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

// encCompactedTombstone: a client writes a record and its tombstone into
// a compacted topic through the encrypting kproxy. Upstream the record is
// ciphertext and the tombstone stays null, so that compaction deletes the
// key; read back through kproxy they are the value and a null again.
func encCompactedTombstone(t *testing.T, c *cellCtx, e *env, tombstone func(t *testing.T, addr, topic, key, value string)) {
	topic := e.newCompactedTopic(t, name(c, "compacted"))
	const key = "k"
	secret := "value-compacted-" + c.key.client + "-" + runID
	tombstone(t, e.enc.BootstrapAddr(), topic, key, secret)

	stored := e.readUpstream(t, topic, 2)
	if bytes.Contains(stored[0].Value, []byte(secret)) {
		t.Errorf("compacted topic: the upstream holds the plaintext %q", secret)
	}
	if stored[0].Value == nil {
		t.Errorf("compacted topic: the record before the tombstone is null upstream")
	}
	if stored[1].Value != nil {
		t.Errorf("compacted topic: the tombstone is %d bytes upstream, want null", len(stored[1].Value))
	}

	read := readEncNullable(t, e.enc.BootstrapAddr(), topic, 2)
	if string(read[0].Key) != key || string(read[0].Value) != secret || read[0].Value == nil {
		t.Errorf("compacted topic through kproxy: first record %s=%q, want %s=%q", read[0].Key, read[0].Value, key, secret)
	}
	if string(read[1].Key) != key || read[1].Value != nil {
		t.Errorf("compacted topic through kproxy: second record %s=%q (null: %v), want the tombstone of %s", read[1].Key, read[1].Value, read[1].Value == nil, key)
	}
	c.note("compacted topic: the tombstone stays null upstream and through kproxy")
}

// readEncNullable reads the first n records of topic through kproxy at
// addr with franz-go, which tells a null value from an empty one.
func readEncNullable(t *testing.T, addr, topic string, n int) []*kgo.Record {
	t.Helper()
	cl := testkit.Client(t, kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for len(rs) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records through kproxy: %v", len(rs), n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d through kproxy: %v", topic, p, err) })
		rs = append(rs, fs.Records()...)
	}
	return rs
}

// newCompactedTopic creates topic, one partition with cleanup.policy
// compact, and waits until every broker knows it.
func (e *env) newCompactedTopic(t *testing.T, topic string) string {
	t.Helper()
	adm := e.admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	policy := "compact"
	resp, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": &policy}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create compacted topic %s: %v", topic, err)
	}
	e.mu.Lock()
	e.topics = append(e.topics, topic)
	e.mu.Unlock()
	e.waitTopic(t, ctx, adm, topic, 1)
	e.waitTopicOnEveryBroker(t, ctx, topic, 1)
	e.checkCleanupPolicy(t, adm, topic)
	return topic
}

// checkCleanupPolicy fails unless topic is compacted upstream.
func (e *env) checkCleanupPolicy(t *testing.T, adm *kadm.Client, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatalf("describe %s: %v", topic, err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		t.Fatalf("describe %s: %v", topic, err)
	}
	if v := configValue(rc.Configs, "cleanup.policy"); v != "compact" {
		t.Fatalf("%s has cleanup.policy %q, want compact", topic, v)
	}
}
