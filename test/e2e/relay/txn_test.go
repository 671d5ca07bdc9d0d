package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestTransactions: a transactional producer commits and aborts through
// kproxy; a read_committed consumer sees exactly the committed records, and
// nothing of an open transaction until it commits.
func TestTransactions(t *testing.T) {
	t.Parallel()
	const topic = "payments"
	ctx := testkit.Context(t, 60*time.Second)
	e := newEnv(t, "")
	e.createTopic(ctx, topic, 3)

	producer := e.client(
		kgo.DefaultProduceTopic(topic),
		kgo.TransactionalID("e2e-txn"),
		kgo.TransactionTimeout(10*time.Second),
	)
	// begin starts a transaction and produces n records in it.
	begin := func(prefix string, n int) []string {
		t.Helper()
		if err := producer.BeginTransaction(); err != nil {
			t.Fatalf("begin %s: %v", prefix, err)
		}
		var vals []string
		for i := range n {
			v := fmt.Sprintf("%s-%04d", prefix, i)
			vals = append(vals, v)
			if err := producer.ProduceSync(ctx, &kgo.Record{Key: []byte(v), Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatalf("produce %s: %v", v, err)
			}
		}
		return vals
	}
	end := func(how kgo.TransactionEndTry) {
		t.Helper()
		if err := producer.EndTransaction(ctx, how); err != nil {
			t.Fatalf("end transaction (commit=%v): %v", how, err)
		}
	}

	committed := begin("commit1", 100)
	end(kgo.TryCommit)
	aborted := begin("abort", 100)
	end(kgo.TryAbort)
	committed = append(committed, begin("commit2", 100)...)
	end(kgo.TryCommit)

	readCommitted := e.client(
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)
	got := valuesOf(pollN(ctx, t, readCommitted, len(committed)))
	checkExactly(t, "read_committed", got, committed)
	noMoreRecords(t, readCommitted, 300*time.Millisecond)

	// The aborted records are in the log: a read_uncommitted consumer sees
	// them, so the check above is not vacuous.
	readUncommitted := e.client(
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()),
	)
	all := valuesOf(pollN(ctx, t, readUncommitted, len(committed)+len(aborted)))
	checkExactly(t, "read_uncommitted", all, append(append([]string(nil), committed...), aborted...))

	// An open transaction stays invisible until it commits.
	open := begin("open", 20) // produced and acknowledged, not committed
	noMoreRecords(t, readCommitted, 500*time.Millisecond)
	end(kgo.TryCommit)
	checkExactly(t, "read_committed after commit", valuesOf(pollN(ctx, t, readCommitted, len(open))), open)

	for _, key := range []kmsg.Key{kmsg.InitProducerID, kmsg.EndTxn, kmsg.FindCoordinator} {
		if e.sniff.Responses(int16(key)) == 0 {
			t.Errorf("no %s response seen", key.Name())
		}
	}
	e.checkAddrs()
}

func valuesOf(rs []*kgo.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Value)
	}
	return out
}

// checkExactly asserts got and want hold the same values, each exactly once.
func checkExactly(t *testing.T, what string, got, want []string) {
	t.Helper()
	count := map[string]int{}
	for _, v := range got {
		count[v]++
	}
	bad := 0
	for _, v := range want {
		if count[v] != 1 {
			if bad++; bad <= 10 {
				t.Errorf("%s: %q seen %d times, want once", what, v, count[v])
			}
		}
		delete(count, v)
	}
	for v, n := range count {
		if bad++; bad <= 10 {
			t.Errorf("%s: unexpected %q seen %d times", what, v, n)
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d problems (%d records seen, %d expected)", what, bad, len(got), len(want))
	}
}
