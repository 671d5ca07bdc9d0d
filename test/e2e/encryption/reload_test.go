package e2eencryption

import (
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// TestReloadedKeyUsedAtOnce: a changed key: in the file applies without a
// restart to the very next record (dek.max_age is an hour here), and the
// records under the old key stay readable.
func TestReloadedKeyUsedAtOnce(t *testing.T) {
	var first, second string
	e := newEnv(t, []string{"payreload"}, section(`    - {match: "pay*", key: "alias/first"}`, ""),
		func(k *localkms.Server) {
			first, second = k.CreateKey(), k.CreateKey()
			k.CreateAlias("alias/first", first)
			k.CreateAlias("alias/second", second)
		})
	ctx := e.ctx()
	p := e.proxied(kgo.DefaultProduceTopic("payreload"))
	if err := p.ProduceSync(ctx, kgo.StringRecord("under first")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(e.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.cfgPath, []byte(strings.Replace(string(text), "alias/first", "alias/second", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	e.kp.WaitLog("the encryption section reloaded", testkit.MessagePrefix("encryption rules reloaded"))
	if err := p.ProduceSync(ctx, kgo.StringRecord("under second")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	stored := testkit.Consume(t, ctx, e.direct(kgo.ConsumeTopics("payreload")), 2)
	for i, want := range []string{first, second} {
		if m, ok := marker(t, stored[i]); !ok || string(m.KEKID) != want {
			t.Errorf("record %d stored under KEK %q, want %q", i, m.KEKID, want)
		}
	}
	got := testkit.Consume(t, ctx, e.proxied(kgo.ConsumeTopics("payreload")), 2)
	if string(got[0].Value) != "under first" || string(got[1].Value) != "under second" {
		t.Errorf("read back %q, %q", got[0].Value, got[1].Value)
	}
}
