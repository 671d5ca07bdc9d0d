package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

// encTransactions: franz-go writes three transactions (commit, abort,
// commit) into an encrypted topic through the encrypting kproxy. A
// read_committed consumer through it reads exactly the committed records,
// decrypted, so the rewritten batches kept their transactional flags and
// producer fields and the brokers' markers still apply; a read_uncommitted
// one reads the aborted records too (the check is not vacuous), and the
// upstream holds none of the values in the clear.
func encTransactions(t *testing.T, c *cellCtx, e *env) {
	t.Helper()
	if e.encSkip != "" {
		skipCell(t, c, e.encSkip)
	}
	topic := e.newTopic(t, c, "txn", 3) // checkReadCommitted wants the keys spread
	producer := testkit.Client(t, kgo.SeedBrokers(e.enc.BootstrapAddr()), kgo.TransactionalID(name(c, "txn")),
		kgo.TransactionTimeout(30*time.Second))
	b := franzTxnBatches(t, producer, topic, 20)
	read := func(n int, opts ...kgo.Opt) []got {
		cl := testkit.Client(t, append([]kgo.Opt{kgo.SeedBrokers(e.enc.BootstrapAddr()), kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500 * time.Millisecond)}, opts...)...)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		return pollN(t, ctx, cl, n)
	}
	checkReadCommitted(t, "franz-go read_committed through the encrypting kproxy", read(len(b.committed), kgo.FetchIsolationLevel(kgo.ReadCommitted())), b)
	all := read(len(b.committed)+len(b.aborted), kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	seen := map[string]bool{}
	for _, g := range all {
		seen[g.value] = true
	}
	var written []encRec
	for _, r := range append(append([]rec{}, b.committed...), b.aborted...) {
		if !seen[r.value] {
			t.Errorf("read_uncommitted through the encrypting kproxy: %q missing", r.value)
		}
		written = append(written, encRec{key: r.key, value: r.value})
	}
	e.checkNoPlaintext(t, topic, written)
	c.note("transactions: %d committed records read_committed, %d aborted ones withheld", len(b.committed), len(b.aborted))
}
