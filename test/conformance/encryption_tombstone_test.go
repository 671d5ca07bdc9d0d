package conformance

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// encNullable is a record read back from a compacted topic: its key, and
// its value unless null.
type encNullable struct {
	key   string
	value string
	null  bool
}

// encCompactedTombstone: a client writes a record and its tombstone into
// a compacted topic through the encrypting kproxy. Upstream the record is
// ciphertext and the tombstone stays null, so that compaction deletes the
// key; read back through kproxy, by franz-go and by the client itself,
// they are the value and a null again.
func encCompactedTombstone(t *testing.T, c *cellCtx, e *env, cl encClient) {
	topic := e.newCompactedTopic(t, name(c, "compacted"))
	const key = "k"
	secret := "value-compacted-" + c.key.client + "-" + runID
	addr := e.enc.BootstrapAddr()
	cl.tombstone(t, addr, topic, key, secret)

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

	want := []encNullable{{key: key, value: secret}, {key: key, null: true}}
	checkNullables(t, "franz-go", franzEncReadNullable(t, addr, topic, 2), want)
	readers := "franz-go"
	if cl.readNullable != nil && c.key.client != "franz-go" {
		checkNullables(t, c.key.client, cl.readNullable(t, addr, topic, 2), want)
		readers += " and " + c.key.client
	}
	c.note("compacted topic: the tombstone stays null upstream, and through kproxy (read by %s)", readers)
}

// checkNullables fails unless got is want.
func checkNullables(t *testing.T, reader string, got, want []encNullable) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("compacted topic through kproxy, read by %s: %d records, want %d", reader, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("compacted topic through kproxy, read by %s: record %d is %+v, want %+v", reader, i, got[i], want[i])
		}
	}
}

// franzEncReadNullable reads the first n records of topic through kproxy
// at addr with franz-go.
func franzEncReadNullable(t *testing.T, addr, topic string, n int) []encNullable {
	t.Helper()
	var out []encNullable
	for _, r := range readRecords(t, []string{addr}, "through kproxy", topic, n) {
		out = append(out, encNullable{key: string(r.Key), value: string(r.Value), null: r.Value == nil})
	}
	return out
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
