package e2eencryption

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// TestDeletedKEKShredsOnlyItsTopic: each topic has its own KEK
// (alias/kek-$(topic)). Once one KEK is scheduled for deletion (AWS
// deletes a key only after a waiting period; it is unusable from the
// start of it), a kproxy without its data key cached answers fetches of
// that topic with INVALID_RECORD, the documented error, logging topic,
// partition, offset and reason, and refuses new records for it
// retriably without storing them; the other encrypted topic and an
// unencrypted one are produced and consumed as before, through that
// kproxy and the one that was running.
func TestDeletedKEKShredsOnlyItsTopic(t *testing.T) {
	var kekA string
	e := newEnv(t, []string{"paya", "payb", "plain"}, section(`    - {match: "pay*", key: "alias/kek-$(topic)"}`, ""),
		func(k *localkms.Server) {
			kekA = k.CreateKey()
			k.CreateAlias("alias/kek-paya", kekA)
			k.CreateAlias("alias/kek-payb", k.CreateKey())
		})
	ctx := e.ctx()
	produce := func(bootstrap, topic, v string) error {
		cl := testkit.Client(t, kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic(topic), kgo.DisableIdempotentWrite(),
			kgo.RecordRetries(1), kgo.RecordDeliveryTimeout(10*time.Second))
		return cl.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr()
	}
	readBack := func(bootstrap, topic string, want ...string) {
		t.Helper()
		got := testkit.Consume(t, ctx, testkit.Client(t, kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic)), len(want))
		for i, w := range want {
			if string(got[i].Value) != w {
				t.Errorf("%s record %d read back %q, want %q", topic, i, got[i].Value, w)
			}
		}
	}
	for _, topic := range []string{"paya", "payb", "plain"} {
		if err := produce(e.kp.Bootstrap, topic, topic+" before"); err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
	}

	e.kms.ScheduleKeyDeletion(kekA)
	fresh := testkit.RunBinary(t, testkit.SharedKproxy(t), e.cfgPath) // no data key cached
	shreddedFetch(t, ctx, fresh.Bootstrap, "paya")
	fresh.WaitLog("the log line naming the record", func(l testkit.LogLine) bool {
		return l["topic"] == "paya" && l["partition"] == float64(0) && l["offset"] == float64(0) && l["reason"] == "key_unavailable"
	})
	if err := produce(fresh.Bootstrap, "paya", "after deletion"); err == nil {
		t.Error("produce to the topic of the deleted KEK succeeded")
	}
	fresh.WaitLog("the produce refused retriably", func(l testkit.LogLine) bool {
		return l["filter"] == "encryption" && l["error_code"] == kerr.RequestTimedOut.Message && l["topic"] == "paya"
	})
	if n := storedCount(t, e, "paya"); n != 1 {
		t.Errorf("the topic of the deleted KEK holds %d records, want the 1 from before", n)
	}

	for _, kp := range []*testkit.Binary{fresh, e.kp} {
		for _, topic := range []string{"payb", "plain"} {
			if err := produce(kp.Bootstrap, topic, topic+" after"); err != nil {
				t.Fatalf("produce to %s after another topic's KEK was deleted: %v", topic, err)
			}
		}
	}
	for _, kp := range []*testkit.Binary{fresh, e.kp} {
		readBack(kp.Bootstrap, "payb", "payb before", "payb after", "payb after")
		readBack(kp.Bootstrap, "plain", "plain before", "plain after", "plain after")
	}
}
