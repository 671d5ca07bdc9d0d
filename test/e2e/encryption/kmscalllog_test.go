package e2eencryption

import (
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// TestRotationShowsInTheKMSCallLog: the KMS's own log of the data keys it
// generated shows a KEK rotation taking effect without a restart. The
// alias moves to a new KEK; within dek.max_age (an hour here) kproxy keeps
// the data key it has, and a reload of the unchanged rules (what SIGHUP or
// touching the file does) makes the very next record's data key come from
// the new KEK: local-kms logs a GenerateDataKey under it, and the record
// names it. The record under the old KEK still reads.
func TestRotationShowsInTheKMSCallLog(t *testing.T) {
	var oldKEK, newKEK string
	e := newEnv(t, []string{"payrot"}, section(`    - {match: "pay*", key: "alias/kek"}`, ""),
		func(k *localkms.Server) {
			oldKEK, newKEK = k.CreateKey(), k.CreateKey()
			k.CreateAlias("alias/kek", oldKEK)
		})
	ctx := e.ctx()
	p := e.proxied(kgo.DefaultProduceTopic("payrot"))
	produce := func(v string) {
		t.Helper()
		if err := p.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
			t.Fatalf("produce %q: %v", v, err)
		}
	}
	// generated counts local-kms's log lines for data keys under kek.
	generated := func(kek string) int {
		return strings.Count(e.kms.Log(), "Data key generated with plaintext: "+kek)
	}

	produce("under the old KEK")
	if generated(oldKEK) != 1 || generated(newKEK) != 0 {
		t.Fatalf("KMS log: %d data keys under the old KEK, %d under the new one; want 1 and 0\n%s", generated(oldKEK), generated(newKEK), e.kms.Log())
	}
	e.kms.UpdateAlias("alias/kek", newKEK)
	produce("within max_age")
	if n := generated(newKEK); n != 0 {
		t.Fatalf("KMS log: %d data keys under the new KEK before dek.max_age or a reload; the data key in use must last", n)
	}

	text, err := os.ReadFile(e.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	// The same rules: a reload retires the data keys in use all the same.
	if err := os.WriteFile(e.cfgPath, append(text, "# the alias was rotated\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	e.kp.WaitLog("the encryption section reloaded", testkit.MessagePrefix("encryption rules reloaded"))
	produce("after the reload")
	if n := generated(newKEK); n != 1 {
		t.Fatalf("KMS log: %d data keys under the new KEK after the reload, want 1\n%s", n, e.kms.Log())
	}

	stored := testkit.Consume(t, ctx, e.direct(kgo.ConsumeTopics("payrot")), 3)
	for i, want := range []string{oldKEK, oldKEK, newKEK} {
		if m, ok := marker(t, stored[i]); !ok || string(m.KEKID) != want {
			t.Errorf("stored record %d: KEK %q, want %q", i, m.KEKID, want)
		}
	}
	got := testkit.Consume(t, ctx, e.proxied(kgo.ConsumeTopics("payrot")), 3)
	for i, want := range []string{"under the old KEK", "within max_age", "after the reload"} {
		if string(got[i].Value) != want {
			t.Errorf("record %d read back %q, want %q", i, got[i].Value, want)
		}
	}
}
