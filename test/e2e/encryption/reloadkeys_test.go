package e2eencryption

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// TestReloadSharingOneKeyAcrossVirtualClustersRefused: a reload whose
// key: template would encrypt two virtual clusters' topics under one KMS
// key is refused as any invalid file is: a log line names the key, the
// reload failure is counted, and the key in force stays, so each
// cluster's records stay under its own KEK.
func TestReloadSharingOneKeyAcrossVirtualClustersRefused(t *testing.T) {
	vcs := `listeners: {bind_host: 127.0.0.1}
virtual_clusters:
  - name: alpha
    topic_prefix: alpha.
    group_prefix: alpha.
    transactional_id_prefix: alpha.
    listeners: {bootstrap_port: 0, broker_port_base: 0}
  - name: beta
    topic_prefix: beta.
    group_prefix: beta.
    transactional_id_prefix: beta.
    listeners: {bootstrap_port: 0, broker_port_base: 0}
` + section(`    - {match: "*", key: "alias/$(virtual_cluster)/kek"}`, "")
	var alphaKEK string
	e := newEnv(t, []string{"alpha.events"}, vcs, func(k *localkms.Server) {
		alphaKEK = k.CreateKey()
		k.CreateAlias("alias/alpha/kek", alphaKEK)
		k.CreateAlias("alias/beta/kek", k.CreateKey())
		k.CreateAlias("alias/shared", k.CreateKey())
	})
	text, err := os.ReadFile(e.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	shared := strings.Replace(string(text), "alias/$(virtual_cluster)/kek", "alias/shared", 1)
	if err := os.WriteFile(e.cfgPath, []byte(shared), 0o600); err != nil {
		t.Fatal(err)
	}
	refused := e.kp.WaitLog("the reload refused", testkit.MessagePrefix("configuration reload rejected"))
	if msg, _ := refused["error"].(string); !strings.Contains(msg, "encryption.topics[0].key") {
		t.Errorf("the refusal says %q, want it to name the key", msg)
	}
	if n, ok := testkit.ScrapeSeries(t, e.kp.Admin, `kproxy_config_reloads_total{result="failure"}`); !ok || n != 1 {
		t.Errorf("reload failures counted %v, want 1", n)
	}
	ctx := e.ctx()
	cl := testkit.Client(t, kgo.SeedBrokers(e.kp.VirtualClusterBootstrap("alpha")), kgo.DefaultProduceTopic("events"))
	if err := cl.ProduceSync(ctx, kgo.StringRecord("after the refused reload")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	stored := testkit.Consume(t, ctx, e.direct(kgo.ConsumeTopics("alpha.events")), 1)[0]
	if m, ok := marker(t, stored); !ok || string(m.KEKID) != alphaKEK || bytes.Contains(stored.Value, []byte("after")) {
		t.Errorf("stored under KEK %q (%q), want alpha's own %q", m.KEKID, stored.Value, alphaKEK)
	}
}
