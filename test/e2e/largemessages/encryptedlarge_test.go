package e2elargemessages

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestEncryptedValueAboveStreamingSize: an encrypted value larger than
// what kproxy streams to consumers is still resolved and then decrypted:
// the decryption, which runs after resolution on a fetch, needs the
// value's bytes, so an encrypted value is held rather than streamed.
func TestEncryptedValueAboveStreamingSize(t *testing.T) {
	e := newEncryptedEnv(t)
	ctx := e.ctx()
	plain := value(8, 6<<20) // above the 4 MiB that are streamed
	if err := e.proxied(kgo.DefaultProduceTopic("media.secret")).ProduceSync(ctx, &kgo.Record{Value: plain}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	got := testkit.Consume(t, ctx, e.proxied(kgo.ConsumeTopics("media.secret")), 1)[0]
	if digest(got.Value) != digest(plain) {
		t.Errorf("consumer through kproxy read %d bytes, want the %d plaintext bytes", len(got.Value), len(plain))
	}
}
