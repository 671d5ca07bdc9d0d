package e2elargemessages

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDeniedProduceUploadsNothing: the policy decides before offload, so
// a principal denied writes cannot make kproxy store anything (a cost an
// intruder could otherwise run up); an allowed one's value is stored.
func TestDeniedProduceUploadsNothing(t *testing.T) {
	e := newEnv(t, []string{"media.up"}, section(`    - {match: "media.*", threshold_bytes: 1048576}`, "")+`
policy:
  default: allow
  rules: [{name: no-writes, principals: ["client_id:intruder"], deny: [write], topics: ["*"]}]
`)
	ctx := e.ctx()
	big := value(9, 2<<20)
	for range 3 {
		err := e.proxied(kgo.ClientID("intruder"), kgo.DefaultProduceTopic("media.up")).ProduceSync(ctx, &kgo.Record{Value: big}).FirstErr()
		if !errors.Is(err, kerr.TopicAuthorizationFailed) {
			t.Fatalf("denied produce: %v, want TOPIC_AUTHORIZATION_FAILED", err)
		}
	}
	if keys := e.objects(""); len(keys) != 0 {
		t.Fatalf("bucket holds %v after denied produces, want nothing", keys)
	}
	if err := e.proxied(kgo.ClientID("writer"), kgo.DefaultProduceTopic("media.up")).ProduceSync(ctx, &kgo.Record{Value: big}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if keys := e.objects(""); len(keys) != 1 {
		t.Fatalf("bucket holds %v after an allowed produce, want one object", keys)
	}
}
