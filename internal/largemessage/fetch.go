package largemessage

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

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

// fetch resolves the pointers of a Fetch response's matching topics.
func (f *Filter) fetch(resp *kmsg.FetchResponse) error {
	if !f.resolve.Load() {
		return nil
	}
	rs := f.rules.Load()
	w := f.worker()
	defer f.done(w)
	ctx := context.Background()
	for i := range resp.Topics {
		t := &resp.Topics[i]
		name := t.Topic
		if name == "" {
			name, _ = f.names.Lookup(t.TopicID)
		}
		if _, match := rs.find(name); !match {
			continue // only a topic with a rule has pointers kproxy resolves
		}
		for j := range t.Partitions {
			p := &t.Partitions[j]
			p.RecordBatches = f.resolvePartition(ctx, w, name, p.Partition, p.RecordBatches, &p.ErrorCode)
		}
	}
	return nil
}

// resolvePartition returns a partition's records with their pointers
// resolved; on failure it sets the partition's error code, logs the
// record, counts the failure, and returns no records.
func (f *Filter) resolvePartition(ctx context.Context, w *worker, topic string, partition int32, src []byte, code *int16) []byte {
	if len(src) == 0 || *code != 0 {
		return src
	}
	w.resolve.start(ctx)
	out, _, err := w.rw.Rewrite(nil, src, w.resolve.fn)
	if err == nil {
		f.metrics.resolved.Add(float64(w.resolve.resolved))
		f.metrics.resolvedBytes.Add(float64(w.resolve.bytes))
		return out
	}
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
	return nil
}
