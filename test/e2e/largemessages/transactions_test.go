package e2elargemessages

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestTransactionsReadCommitted: a transactional producer commits one
// transaction and aborts another through kproxy, each with offloaded
// values; a read_committed consumer through kproxy reads exactly the
// committed records, resolved, and the aborted transaction's objects are
// deleted and counted as orphans.
func TestTransactionsReadCommitted(t *testing.T) {
	e := newEnv(t, []string{"media.tx"}, section(`    - {match: "media.*", threshold_bytes: 1048576}`, ""))
	ctx := e.ctx()
	p := e.proxied(kgo.TransactionalID("tx-1"), kgo.DefaultProduceTopic("media.tx"))
	committed := map[[32]byte]bool{}
	for _, commit := range []bool{true, false} {
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			v := value(uint64(i)+100*boolSeed(commit), 2<<20)
			if commit {
				committed[digest(v)] = true
			}
			if err := p.ProduceSync(ctx, &kgo.Record{Value: v}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.ProduceSync(ctx, kgo.StringRecord(fmt.Sprintf("small-%v", commit))).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := p.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	c := e.proxied(kgo.ConsumeTopics("media.tx"), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	got := testkit.Consume(t, ctx, c, 3)
	for _, r := range got[:2] {
		if !committed[digest(r.Value)] {
			t.Errorf("read_committed consumer read a %d-byte value not of the committed transaction", len(r.Value))
		}
	}
	if string(got[2].Value) != "small-true" {
		t.Errorf("third record %.40q, want small-true", got[2].Value)
	}
	if extra := c.PollRecords(testkit.Context(t, 2*time.Second), 10).Records(); len(extra) != 0 {
		t.Errorf("read_committed consumer read %d more records", len(extra))
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.metric(`kproxy_large_messages_orphans_total{result="success"}`) < 2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if got := e.metric(`kproxy_large_messages_orphans_total{result="success"}`); got != 2 {
		t.Errorf("orphans deleted = %v, want the aborted transaction's 2", got)
	}
	if n := len(e.objects("default/media.tx/")); n != 2 {
		t.Errorf("bucket holds %d objects, want the committed transaction's 2", n)
	}
}

func boolSeed(b bool) uint64 {
	if b {
		return 1
	}
	return 2
}
