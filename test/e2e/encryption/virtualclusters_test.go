package e2eencryption

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// TestOnlyTheEncryptingVirtualClusterEncrypts: of two virtual clusters,
// one has an encryption section of its own: its records are stored
// encrypted, bound to the cluster-side (prefixed) topic name, and read
// back through it; the other's records with the same topic name are
// stored as written.
func TestOnlyTheEncryptingVirtualClusterEncrypts(t *testing.T) {
	vcs := `listeners: {bind_host: 127.0.0.1}
virtual_clusters:
  - name: sealed
    topic_prefix: sealed.
    group_prefix: sealed.
    transactional_id_prefix: sealed.
    listeners: {bootstrap_port: 0, broker_port_base: 0}
    encryption:
      kms: {aws_kms: {endpoint: "ENDPOINT", region: ` + localkms.Region + `}}
      topics: [{match: "*", key: "alias/$(virtual_cluster)/kek"}]
  - name: open
    topic_prefix: open.
    group_prefix: open.
    transactional_id_prefix: open.
    listeners: {bootstrap_port: 0, broker_port_base: 0}
`
	e := newEnv(t, []string{"sealed.events", "open.events"}, vcs,
		func(k *localkms.Server) { k.CreateAlias("alias/sealed/kek", k.CreateKey()) })
	ctx := e.ctx()
	for _, vc := range []string{"sealed", "open"} {
		cl := testkit.Client(t, kgo.SeedBrokers(e.kp.VirtualClusterBootstrap(vc)), kgo.DefaultProduceTopic("events"))
		if err := cl.ProduceSync(ctx, kgo.StringRecord("secret of "+vc)).FirstErr(); err != nil {
			t.Fatalf("%s: %v", vc, err)
		}
		back := testkit.Consume(t, ctx, testkit.Client(t, kgo.SeedBrokers(e.kp.VirtualClusterBootstrap(vc)), kgo.ConsumeTopics("events")), 1)
		if string(back[0].Value) != "secret of "+vc {
			t.Errorf("%s reads back %q", vc, back[0].Value)
		}
	}
	sealed := testkit.Consume(t, ctx, e.direct(kgo.ConsumeTopics("sealed.events")), 1)[0]
	if _, ok := marker(t, sealed); !ok || bytes.Contains(sealed.Value, []byte("secret")) {
		t.Errorf("sealed.events stored %q, want it encrypted", sealed.Value)
	}
	open := testkit.Consume(t, ctx, e.direct(kgo.ConsumeTopics("open.events")), 1)[0]
	if _, ok := marker(t, open); ok || string(open.Value) != "secret of open" {
		t.Errorf("open.events stored %q with headers %v, want it as written", open.Value, open.Headers)
	}
}

// testkitShort is a short deadline: to see that nothing more comes.
func testkitShort(t *testing.T) context.Context { return testkit.Context(t, 2*time.Second) }
