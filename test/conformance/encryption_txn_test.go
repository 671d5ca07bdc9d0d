package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

// encTxnRecords is how many records each of the three transactions holds:
// more than numKeys in all, so that checkReadCommitted sees them spread
// over the partitions, few to keep the cell short.
const encTxnRecords = 20

// encTransactions: a client writes three transactions (commit, abort,
// commit) into an encrypted topic through the encrypting kproxy. A
// read_committed consumer through it (franz-go, and the client's own if
// it has one) reads exactly the committed records, decrypted, so the
// rewritten batches kept their transactional flags and producer fields
// and the brokers' markers still apply; a read_uncommitted one reads the
// aborted records too (the check is not vacuous), and the upstream holds
// none of the values in the clear.
func encTransactions(t *testing.T, c *cellCtx, e *env, cl encClient) {
	topic := e.newTopic(t, c, "txn", 3) // checkReadCommitted wants the keys spread
	addr := e.enc.BootstrapAddr()
	b := cl.txn(t, c, addr, topic)
	read := func(n int, opts ...kgo.Opt) []got {
		cl := testkit.Client(t, append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500 * time.Millisecond)}, opts...)...)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		return pollN(t, ctx, cl, n)
	}
	checkReadCommitted(t, "franz-go read_committed through the encrypting kproxy", read(len(b.committed), kgo.FetchIsolationLevel(kgo.ReadCommitted())), b)
	readers := "franz-go"
	if cl.readCommitted != nil {
		checkReadCommitted(t, c.key.client+" read_committed through the encrypting kproxy", cl.readCommitted(t, addr, topic, len(b.committed)), b)
		if c.key.client != "franz-go" {
			readers += " and " + c.key.client
		}
	}
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
	c.note("transactions (%s): %d committed records read_committed by %s, %d aborted ones withheld",
		cl.txnNote, len(b.committed), readers, len(b.aborted))
}

// franzEncTxn writes the three transactions with franz-go.
func franzEncTxn(t *testing.T, c *cellCtx, addr, topic string) txnBatches {
	t.Helper()
	producer := testkit.Client(t, kgo.SeedBrokers(addr), kgo.TransactionalID(name(c, "txn")),
		kgo.TransactionTimeout(30*time.Second))
	return franzTxnBatches(t, producer, topic, encTxnRecords)
}
