package largemessage

import (
	"context"
	"encoding/binary"
	"errors"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/objectstore"
)

// Error codes of a fetched partition whose pointers could not be resolved
// (docs/large-messages.md, "Errors").
var (
	// fetchStoreError: the store could not be reached, throttled or
	// failed; clients retry KAFKA_STORAGE_ERROR quietly, and the values
	// resolve once the store answers.
	fetchStoreError = kerr.KafkaStorageError
	// fetchUnresolvableError: the value cannot be had, now or later (the
	// object deleted, its size or checksum not the pointer's, a pointer
	// naming a bucket or key outside this cluster's). INVALID_RECORD is
	// not retriable: clients surface it to the application instead of
	// fetching the same offset without end.
	fetchUnresolvableError = kerr.InvalidRecord
)

// fetchLimits are what the client asked a Fetch response to hold at most,
// which the resolved values count against.
type fetchLimits struct {
	total       int64 // max_bytes; the whole response
	byPartition map[topicPartition]int64
}

// fetchRequest notes the client's size limits and resolves the pointers
// of the response to it.
func (f *Filter) fetchRequest(c *filter.Conn, req *kmsg.FetchRequest) filter.Verdict {
	if !f.resolve.Load() {
		return filter.Verdict{}
	}
	lim := fetchLimits{total: math.MaxInt32, byPartition: map[topicPartition]int64{}}
	if req.Version >= 3 {
		lim.total = int64(req.MaxBytes)
	}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			lim.byPartition[topicPartition{t.Topic, t.TopicID, p.Partition}] = int64(p.PartitionMaxBytes)
		}
	}
	mem := c.Memory
	return filter.Verdict{InspectResponse: fetchMayResolve, OnFetchSpliced: func(resp *kmsg.FetchResponse, s *filter.Splicer) error {
		f.fetch(resp, lim, mem, s)
		return nil
	}}
}

// fetch resolves the pointers of a Fetch response's matching topics, as
// many as fit the client's limits: the records after the first pointer
// that does not fit are left out, and the client fetches them next, as
// it does when the cluster returns fewer records than it could.
// The values held are charged to mem while they are downloaded and
// resolved; values larger than streamAbove are streamed through s (see
// splice) instead, when s is not nil.
func (f *Filter) fetch(resp *kmsg.FetchResponse, lim fetchLimits, mem filter.Memory, s *filter.Splicer) {
	rs := f.rules.Load()
	w := f.worker()
	defer f.done(w)
	w.resolve.mem, w.resolve.charged = mem, 0
	defer w.resolve.release()
	w.resolve.splicer = s
	defer func() { w.resolve.splicer = nil }()
	ctx := context.Background()
	room := lim.total
	for i := range resp.Topics {
		t := &resp.Topics[i]
		name := t.Topic
		if name == "" {
			name, _ = f.names.Lookup(t.TopicID)
		}
		_, match := rs.find(name)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if !match || len(p.RecordBatches) == 0 || p.ErrorCode != 0 {
				room -= int64(len(p.RecordBatches))
				continue
			}
			partRoom, ok := lim.byPartition[topicPartition{t.Topic, t.TopicID, p.Partition}]
			if !ok {
				partRoom = math.MaxInt32
			}
			p.RecordBatches = f.resolvePartition(ctx, w, name, p.Partition, p.RecordBatches, p.AbortedTransactions, &p.ErrorCode, min(room, partRoom), room == lim.total)
			room -= int64(len(p.RecordBatches))
		}
	}
}

// resolvePartition returns a partition's records with their pointers
// resolved, up to room bytes (the first batch whatever its size when
// first), leaving the batches of the aborted transactions alone; on
// failure it sets the partition's error code, logs the record, counts
// the failure, and returns no records.
func (f *Filter) resolvePartition(ctx context.Context, w *worker, topic string, partition int32, src []byte,
	abortedTxns []kmsg.FetchResponseTopicPartitionAbortedTransaction, code *int16, room int64, first bool) []byte {
	var out []byte
	changed := false
	w.resolve.start(ctx)
	w.resolve.topic, w.resolve.partition = topic, partition
	aborted := newAbortedBatches(abortedTxns)
	for at := 0; at < len(src); {
		n := batchLen(src[at:])
		if n == 0 { // a truncated last batch: the rewriter passes it
			n = len(src) - at
		}
		if aborted.skip(src[at : at+n]) {
			out = append(out, src[at:at+n]...)
			at += n
			continue
		}
		w.resolve.room, w.resolve.first = room-int64(len(out)), first && len(out) == 0
		// Rewritten batches are appended to out directly: no copy of the
		// values besides the one in out.
		got, sum, err := w.rw.Rewrite(out, src[at:at+n], w.resolve.fn)
		if errors.Is(err, errFull) {
			changed = true
			break
		}
		if err != nil {
			f.resolveFailed(err, w, topic, partition, code)
			return nil
		}
		if sum.Changed > 0 {
			out, changed = got, true
		} else {
			out = append(out, src[at:at+n]...)
		}
		at += n
	}
	f.metrics.resolved.Add(float64(w.resolve.resolved))
	f.metrics.resolvedBytes.Add(float64(w.resolve.bytes))
	if !changed {
		return src
	}
	return out
}

// batchLen is the length of the record batch (or legacy message set) src
// starts with, 0 when src does not hold it whole.
func batchLen(src []byte) int {
	const logOverhead = 12 // base offset and length
	if len(src) < logOverhead {
		return 0
	}
	n := int64(int32(binary.BigEndian.Uint32(src[8:]))) + logOverhead
	if n < logOverhead || n > int64(len(src)) {
		return 0
	}
	return int(n)
}

// resolveFailed withholds a partition's records: its error code, the
// metric, and a log line naming the record.
func (f *Filter) resolveFailed(err error, w *worker, topic string, partition int32, code *int16) {
	errCode, reason := fetchUnresolvableError, "unreadable"
	switch {
	case errors.Is(err, objectstore.ErrRetriable):
		errCode, reason = fetchStoreError, "store_unavailable"
	case errors.Is(err, objectstore.ErrMissing):
		reason = "missing"
	case errors.Is(err, objectstore.ErrRejected):
		reason = "store_rejected"
	case errors.Is(err, errForeign):
		reason = "foreign_object"
	case errors.Is(err, errMismatch):
		reason = "mismatch"
	}
	*code = errCode.Code
	f.metrics.failed(opResolve, reason, topic, partition)
	f.log.Error().Err(err).Str("topic", topic).Int32("partition", partition).Int64("offset", w.resolve.badOffset).
		Bytes("record_key", w.resolve.badKey).Str("reason", reason).Str("error_code", errCode.Message).
		Msg("fetched pointer could not be resolved: the partition's records withheld")
}
