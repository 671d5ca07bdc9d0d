package e2eencryption

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// TestKEKRotationAndShredding: after the alias moves to a new key, the
// next data key (dek.max_age: 1s here) is under the new KEK with no
// restart, and records under either KEK read back. Once the old KEK is
// disabled, a proxy that has not cached its data key withholds that
// topic's records with INVALID_RECORD, while a topic under the new KEK
// reads on.
func TestKEKRotationAndShredding(t *testing.T) {
	var oldKEK, newKEK string
	e := newEnv(t, []string{"payrot", "paynew"}, section(`    - {match: "pay*", key: "alias/kek"}`, "  dek: {max_age: 1s}"),
		func(k *localkms.Server) {
			oldKEK, newKEK = k.CreateKey(), k.CreateKey()
			k.CreateAlias("alias/kek", oldKEK)
		})
	ctx := e.ctx()
	produce := func(topic, v string) {
		t.Helper()
		if err := e.proxied(kgo.DefaultProduceTopic(topic)).ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
	}
	produce("payrot", "before rotation")
	e.kms.UpdateAlias("alias/kek", newKEK)
	time.Sleep(1100 * time.Millisecond) // the data key in use ages out
	produce("payrot", "after rotation")
	produce("paynew", "under the new key")

	stored := testkit.Consume(t, ctx, e.direct(kgo.ConsumeTopics("payrot")), 2)
	for i, want := range []string{oldKEK, newKEK} {
		m, ok := marker(t, stored[i])
		if !ok || string(m.KEKID) != want {
			t.Errorf("stored record %d: KEK %q, want %q", i, m.KEKID, want)
		}
	}
	got := testkit.Consume(t, ctx, e.proxied(kgo.ConsumeTopics("payrot")), 2)
	if string(got[0].Value) != "before rotation" || string(got[1].Value) != "after rotation" {
		t.Errorf("read back %q, %q", got[0].Value, got[1].Value)
	}

	e.kms.DisableKey(oldKEK)
	fresh := testkit.RunBinary(t, testkit.SharedKproxy(t), e.cfgPath) // no data key cached
	shreddedFetch(t, ctx, fresh.Bootstrap, "payrot")
	fresh.WaitLog("the log line naming the record", func(l testkit.LogLine) bool {
		return l["topic"] == "payrot" && l["offset"] == float64(0) && l["reason"] == "key_unavailable"
	})
	other := testkit.Consume(t, ctx, testkit.Client(t, kgo.SeedBrokers(fresh.Bootstrap), kgo.ConsumeTopics("paynew")), 1)
	if string(other[0].Value) != "under the new key" {
		t.Errorf("topic under the new KEK read back %q", other[0].Value)
	}
	if n, ok := testkit.ScrapeSeries(t, fresh.Admin, `kproxy_encryption_failures_total{operation="decrypt",partition="0",reason="key_unavailable",topic="payrot"}`); !ok || n < 1 {
		t.Error("no failure metric naming the topic and partition")
	}
}
