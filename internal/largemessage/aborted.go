package largemessage

import (
	"encoding/binary"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fields of a v2 record batch header this file reads.
const (
	batchMagicAt      = 16
	batchAttributesAt = 21
	batchProducerAt   = 43
	batchHeaderSize   = 61
	transactionalFlag = 0x10
	controlFlag       = 0x20
)

// abortedBatches tells, batch by batch in offset order, which batches of
// a read_committed Fetch partition belong to aborted transactions, as a
// client does with the partition's aborted transactions list: their
// records never reach the application, and their objects may already be
// deleted, so they are not resolved.
type abortedBatches struct {
	pending []kmsg.FetchResponseTopicPartitionAbortedTransaction // by first offset, not yet begun
	active  map[int64]bool                                       // producers inside an aborted transaction
}

func newAbortedBatches(list []kmsg.FetchResponseTopicPartitionAbortedTransaction) *abortedBatches {
	a := &abortedBatches{pending: append([]kmsg.FetchResponseTopicPartitionAbortedTransaction(nil), list...), active: map[int64]bool{}}
	sort.Slice(a.pending, func(i, j int) bool { return a.pending[i].FirstOffset < a.pending[j].FirstOffset })
	return a
}

// skip reports whether batch (whole, as batchLen cut it) is an aborted
// transaction's data; its abort marker ends the transaction.
func (a *abortedBatches) skip(batch []byte) bool {
	if len(a.pending) == 0 && len(a.active) == 0 || len(batch) < batchHeaderSize || batch[batchMagicAt] != 2 {
		return false
	}
	base := int64(binary.BigEndian.Uint64(batch))
	for len(a.pending) > 0 && a.pending[0].FirstOffset <= base {
		a.active[a.pending[0].ProducerID] = true
		a.pending = a.pending[1:]
	}
	attrs := binary.BigEndian.Uint16(batch[batchAttributesAt:])
	pid := int64(binary.BigEndian.Uint64(batch[batchProducerAt:]))
	if attrs&transactionalFlag == 0 || !a.active[pid] {
		return false
	}
	if attrs&controlFlag != 0 {
		delete(a.active, pid) // the abort marker
		return false
	}
	return true
}
