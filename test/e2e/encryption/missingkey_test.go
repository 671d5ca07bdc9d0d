package e2eencryption

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

// passedInClear matches the line that says a topic's records are stored
// in the clear because its key is missing.
func passedInClear(topic string) func(testkit.LogLine) bool {
	return func(l testkit.LogLine) bool {
		return l["topic"] == topic && l["key"] == "alias/absent" &&
			testkit.MessagePrefix("encryption key missing: records stored in the clear")(l)
	}
}

// producerGivingUp produces to topic and fails a record after two
// retries, instead of retrying a retriable refusal without end (not
// idempotent: an idempotent producer may not give up a record it sent).
func producerGivingUp(topic string) []kgo.Opt {
	return []kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.DisableIdempotentWrite(), kgo.RecordRetries(2)}
}

// TestMissingKeyPassthroughStoresInTheClear: with on_missing_key:
// passthrough, records of a topic whose KEK does not exist are stored as
// written, read back through kproxy, and the topic is logged once, not
// once per produce.
func TestMissingKeyPassthroughStoresInTheClear(t *testing.T) {
	e := newEnv(t, []string{"paymissing"}, section(`    - {match: "pay*", key: "alias/absent"}`, "  on_missing_key: passthrough"), nil)
	ctx := e.ctx()
	p := e.proxied(producerGivingUp("paymissing")...)
	for _, v := range []string{"first in the clear", "second in the clear"} {
		if err := p.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
			t.Fatalf("produce %q with the key missing and passthrough: %v", v, err)
		}
	}
	for _, r := range testkit.Consume(t, ctx, e.direct(kgo.ConsumeTopics("paymissing")), 2) {
		if _, ok := marker(t, r); ok {
			t.Errorf("record at offset %d stored with a marker, want it as written", r.Offset)
		}
	}
	got := testkit.Consume(t, ctx, e.proxied(kgo.ConsumeTopics("paymissing")), 2)
	if string(got[0].Value) != "first in the clear" || string(got[1].Value) != "second in the clear" {
		t.Errorf("read back %q, %q", got[0].Value, got[1].Value)
	}
	e.kp.WaitLog("the line saying the topic is stored in the clear", passedInClear("paymissing"))
	rest, _ := e.kp.Stop()
	for _, l := range rest {
		if passedInClear("paymissing")(l) {
			t.Errorf("the topic's passthrough logged again: %v", l)
		}
	}
}

// TestMissingKeyRejectStoresNothing: with on_missing_key: reject (the
// default), the same produce is refused with REQUEST_TIMED_OUT, which
// clients retry, the refusal names the topic and key, and the topic
// stays empty.
func TestMissingKeyRejectStoresNothing(t *testing.T) {
	e := newEnv(t, []string{"paymissing"}, section(`    - {match: "pay*", key: "alias/absent"}`, "  on_missing_key: reject"), nil)
	p := e.proxied(producerGivingUp("paymissing")...)
	err := p.ProduceSync(e.ctx(), kgo.StringRecord("must not be stored")).FirstErr()
	if !errors.Is(err, kgo.ErrRecordRetries) { // retried: the refusal is retriable
		t.Fatalf("produce with the key missing and reject: %v, want it refused and retried", err)
	}
	e.kp.WaitLog("the refusal naming the topic and key", func(l testkit.LogLine) bool {
		return l["topic"] == "paymissing" && l["key"] == "alias/absent" && l["error_code"] == kerr.RequestTimedOut.Message
	})
	if n := storedCount(t, e, "paymissing"); n != 0 {
		t.Errorf("%d records stored with the key missing and reject", n)
	}
}
