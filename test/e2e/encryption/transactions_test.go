package e2eencryption

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// TestTransactionsReadCommitted: a transactional producer commits one
// transaction and aborts another through kproxy; a read_committed consumer
// through kproxy reads exactly the committed records, decrypted, so the
// batches kept their transactional flags and producer fields.
func TestTransactionsReadCommitted(t *testing.T) {
	e := newEnv(t, []string{"paytx"}, section(`    - {match: "pay*", key: "alias/kek"}`, ""),
		func(k *localkms.Server) { k.CreateAlias("alias/kek", k.CreateKey()) })
	ctx := e.ctx()
	p := e.proxied(kgo.TransactionalID("tx-1"), kgo.DefaultProduceTopic("paytx"))
	for _, commit := range []bool{true, false, true} {
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := p.ProduceSync(ctx, kgo.StringRecord(fmt.Sprintf("secret-%v-%d", commit, i))).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	c := e.proxied(kgo.ConsumeTopics("paytx"), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	got := testkit.Consume(t, ctx, c, 6)
	for _, r := range got {
		if string(r.Value[:len("secret-true")]) != "secret-true" {
			t.Errorf("read_committed consumer read %q, from an aborted transaction or undecrypted", r.Value)
		}
	}
	if len(got) != 6 {
		t.Errorf("read %d committed records, want 6", len(got))
	}
	if extra := c.PollRecords(testkitShort(t), 10).Records(); len(extra) != 0 {
		t.Errorf("read_committed consumer read %d more records: %q", len(extra), extra[0].Value)
	}
}
