package largemessage

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// maxTxnObjects bounds the objects remembered for the open transactions
// of one process: past it, an aborted transaction's objects are left to
// the bucket's lifecycle rule.
const maxTxnObjects = 100_000

// maxDeleters bounds the orphan deletions running in the background.
const maxDeleters = 4

// transactions are the objects the open transactions stored through this
// process, by producer id, until EndTxn says whether they were committed.
type transactions struct {
	mu    sync.Mutex
	byPID map[int64][]string
	count int
}

// add remembers keys as stored in pid's open transaction.
func (t *transactions) add(pid int64, keys []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.count+len(keys) > maxTxnObjects {
		return
	}
	if t.byPID == nil {
		t.byPID = map[int64][]string{}
	}
	t.byPID[pid] = append(t.byPID[pid], keys...)
	t.count += len(keys)
}

// end forgets pid's open transaction and returns its objects.
func (t *transactions) end(pid int64) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := t.byPID[pid]
	delete(t.byPID, pid)
	t.count -= len(keys)
	return keys
}

// endTxn deletes, once the cluster has aborted a transaction, the objects
// it stored through this process; a commit only forgets them.
func (f *Filter) endTxn(_ *filter.Conn, req *kmsg.EndTxnRequest) filter.Verdict {
	pid, commit := req.ProducerID, req.Commit
	return filter.Verdict{OnResponse: filter.Then(func(resp *kmsg.EndTxnResponse) error {
		if resp.ErrorCode != 0 {
			return nil // the transaction is still open: the producer retries or aborts
		}
		keys := f.txns.end(pid)
		if !commit {
			f.orphans(keys, "transaction aborted")
		}
		return nil
	})}
}

// orphans deletes objects no acknowledged record points to, best effort,
// and counts them; what cannot be deleted is the lifecycle rule's.
func (f *Filter) orphans(keys []string, why string) {
	if len(keys) == 0 {
		return
	}
	del := func() {
		failed := 0
		for _, key := range keys {
			if err := f.store.Delete(context.Background(), key); err != nil {
				failed++
				f.metrics.orphansNotFreed.Inc()
				f.log.Warn().Err(err).Str("object", key).Str("why", why).Msg("orphaned object not deleted: left to the bucket's lifecycle rule")
				continue
			}
			f.metrics.orphansDeleted.Inc()
		}
		f.log.Info().Int("objects", len(keys)).Int("not_deleted", failed).Str("why", why).Msg("orphaned objects deleted")
	}
	select {
	case f.deleters <- struct{}{}: // the client's answer does not wait for the store
		go func() {
			defer func() { <-f.deleters }()
			del()
		}()
	default: // as many deletions running as allowed: this one holds its request
		del()
	}
}
