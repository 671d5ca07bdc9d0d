package e2eencryption

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// TestEveryCodecStoresOnlyCiphertext: an idempotent producer writes
// records with headers and a tombstone through kproxy with every codec; a
// consumer through kproxy reads exactly what was written, while the
// cluster holds no byte of plaintext: each stored value and header value
// is sealed, each record carries the marker, the tombstone stays null, and
// keys stay in the clear. A topic no rule matches is stored as written.
func TestEveryCodecStoresOnlyCiphertext(t *testing.T) {
	var topics []string
	for _, c := range testkit.Codecs() {
		topics = append(topics, "pay"+c.Name)
	}
	e := newEnv(t, append(topics, "plain"), section(`    - {match: "pay*", key: "alias/kek", encrypt: [value, headers]}`, ""),
		func(k *localkms.Server) { k.CreateAlias("alias/kek", k.CreateKey()) })
	ctx := e.ctx()
	const n = 50
	for _, c := range testkit.Codecs() {
		topic := "pay" + c.Name
		p := e.proxied(kgo.ProducerBatchCompression(c.Codec), kgo.DefaultProduceTopic(topic))
		var recs []*kgo.Record
		for i := range n {
			recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "key-%d", i), Value: plaintext(topic, i),
				Headers: []kgo.RecordHeader{{Key: "trace", Value: headerPlaintext(topic, i)}}})
		}
		recs = append(recs, &kgo.Record{Key: []byte("gone")}) // a tombstone
		if err := p.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("%s: produce through kproxy: %v", topic, err)
		}
	}
	if err := e.proxied(kgo.DefaultProduceTopic("plain")).ProduceSync(ctx, kgo.StringRecord("in the clear")).FirstErr(); err != nil {
		t.Fatal(err)
	}

	for _, topic := range topics {
		got := testkit.Consume(t, ctx, e.proxied(kgo.ConsumeTopics(topic)), n+1)
		for i, r := range got {
			if i == n {
				if r.Value != nil || string(r.Key) != "gone" || len(r.Headers) != 0 {
					t.Errorf("%s: tombstone read back as key %q value %q headers %v", topic, r.Key, r.Value, r.Headers)
				}
				continue
			}
			if !bytes.Equal(r.Value, plaintext(topic, i)) || len(r.Headers) != 1 || r.Headers[0].Key != "trace" ||
				!bytes.Equal(r.Headers[0].Value, headerPlaintext(topic, i)) || string(r.Key) != fmt.Sprintf("key-%d", i) {
				t.Fatalf("%s: record %d read back as key %q value %q headers %v", topic, i, r.Key, r.Value, r.Headers)
			}
		}
		stored := testkit.Consume(t, ctx, e.direct(kgo.ConsumeTopics(topic)), n+1)
		for i, r := range stored {
			if _, ok := marker(t, r); !ok {
				t.Fatalf("%s: stored record %d has no marker header", topic, i)
			}
			if i == n {
				if r.Value != nil {
					t.Errorf("%s: stored tombstone has value %q", topic, r.Value)
				}
				continue
			}
			if bytes.Contains(r.Value, []byte("secret")) || string(r.Key) != fmt.Sprintf("key-%d", i) {
				t.Fatalf("%s: stored record %d: key %q value %q, want the key in the clear and the value sealed", topic, i, r.Key, r.Value)
			}
			for _, h := range r.Headers {
				if bytes.Contains(h.Value, []byte("secret")) {
					t.Fatalf("%s: stored record %d: header %s in the clear: %q", topic, i, h.Key, h.Value)
				}
			}
		}
	}
	// The uncompressed batches as the cluster serves them: no plaintext.
	raw := rawRecords(t, e, "paynone")
	if bytes.Contains(raw, []byte("secret")) || len(raw) == 0 {
		t.Errorf("raw stored bytes of paynone (%d bytes) contain plaintext", len(raw))
	}
	plain := testkit.Consume(t, ctx, e.direct(kgo.ConsumeTopics("plain")), 1)
	if string(plain[0].Value) != "in the clear" || len(plain[0].Headers) != 0 {
		t.Errorf("topic no rule matches stored %q %v, want as produced", plain[0].Value, plain[0].Headers)
	}
}

func plaintext(topic string, i int) []byte { return fmt.Appendf(nil, "secret-value-%s-%d", topic, i) }

func headerPlaintext(topic string, i int) []byte {
	return fmt.Appendf(nil, "secret-header-%s-%d", topic, i)
}

// rawRecords are the record bytes of partition 0 of topic as the cluster
// sends them in a Fetch response.
func rawRecords(t *testing.T, e *env, topic string) []byte {
	t.Helper()
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	cl := e.direct()
	m, err := meta.RequestWith(e.ctx(), cl)
	if err != nil || len(m.Topics) != 1 {
		t.Fatalf("metadata of %s: %v", topic, err)
	}
	resp, err := testkit.FetchByID(13, m.Topics[0].TopicID).RequestWith(e.ctx(), cl)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			if p.ErrorCode != 0 {
				t.Fatalf("raw fetch of %s: error code %d", topic, p.ErrorCode)
			}
			out = append(out, p.RecordBatches...)
		}
	}
	return out
}
