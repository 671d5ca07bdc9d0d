package encryption

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/kms"
)

// Error codes of a fetched partition whose records could not be
// decrypted (docs/encryption.md, "Error codes").
var (
	// fetchKMSError: the KMS could not be reached or throttled; clients
	// retry KAFKA_STORAGE_ERROR quietly, and the records decrypt once
	// it answers.
	fetchKMSError = kerr.KafkaStorageError
	// fetchUnreadableError: the records cannot be decrypted, now or
	// later (their KEK disabled or deleted, a tampered or moved record).
	// INVALID_RECORD is not retriable: clients surface it to the
	// application instead of fetching the same offset without end.
	fetchUnreadableError = kerr.InvalidRecord
)

// fetch decrypts the records of a Fetch response that carry the marker.
// The records are opened into pooled buffers, which the engine releases
// once it has written the response.
func (f *Filter) fetch(resp *kmsg.FetchResponse) (release func(), err error) {
	w := f.worker()
	defer f.done(w)
	opened := &heldRecordBufs{pool: f.recordBufs}
	ctx, cancel := context.WithTimeout(context.Background(), kms.DefaultCallTimeout)
	defer cancel()
	for i := range resp.Topics {
		t := &resp.Topics[i]
		name := f.topicName(t.Topic, t.TopicID)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			p.RecordBatches = f.openPartition(ctx, w, opened, name, p.Partition, p.RecordBatches, &p.ErrorCode)
		}
	}
	return opened.releaser(), nil
}

// shareFetch decrypts the records of a ShareFetch response (KIP-932) as
// fetch does.
func (f *Filter) shareFetch(resp *kmsg.ShareFetchResponse) (release func(), err error) {
	w := f.worker()
	defer f.done(w)
	opened := &heldRecordBufs{pool: f.recordBufs}
	ctx, cancel := context.WithTimeout(context.Background(), kms.DefaultCallTimeout)
	defer cancel()
	for i := range resp.Topics {
		t := &resp.Topics[i]
		name := f.topicName("", t.TopicID)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			p.Records = f.openPartition(ctx, w, opened, name, p.Partition, p.Records, &p.ErrorCode)
		}
	}
	return opened.releaser(), nil
}

// topicName is a response topic's client name: as named, or by id.
func (f *Filter) topicName(name string, id [16]byte) string {
	if name != "" {
		return name
	}
	name, _ = f.names.Lookup(id)
	return name
}

// openPartition returns a partition's records decrypted, into a buffer
// added to opened when any was; on failure it sets the partition's error
// code, logs the offset, counts the failure, and returns no records.
func (f *Filter) openPartition(ctx context.Context, w *worker, opened *heldRecordBufs, topic string, partition int32, src []byte, code *int16) []byte {
	if len(src) == 0 || *code != 0 {
		return src
	}
	broker := ""
	if topic != "" {
		broker = f.brokerTopic(topic)
	}
	w.open.start(ctx, broker)
	// Opened records are shorter than sealed ones (compressed, they
	// grow the buffer as they need). A partition without the marker
	// changes nothing: a size the pool does not hold is left to the
	// rewriter, which allocates only for a change.
	var dst []byte
	var buf *[]byte
	if f.recordBufs.pooled(len(src)) {
		buf = f.recordBufs.get(len(src))
		dst = *buf
	}
	out, sum, err := w.rw.RewriteMarked(dst, src, w.markerName, w.open.fn)
	if buf != nil {
		opened.keep(buf, out, err == nil && sum.Changed > 0)
	}
	if err == nil {
		f.metrics.decrypted.Add(float64(w.open.opened))
		return out
	}
	errCode, reason := fetchUnreadableError, "unreadable"
	switch {
	case errors.Is(err, kms.ErrRetriable):
		errCode, reason = fetchKMSError, "kms_unavailable"
	case errors.Is(err, kms.ErrKeyUnavailable):
		reason = "key_unavailable"
	case errors.Is(err, errTopicUnnamed):
		errCode, reason = kerr.UnknownTopicID, "topic_unnamed"
	}
	*code = errCode.Code
	f.metrics.failed(opDecrypt, reason, topic, partition)
	f.log.Error().Err(err).Str("topic", topic).Int32("partition", partition).Int64("offset", w.open.badOffset).
		Str("reason", reason).Str("error_code", errCode.Message).Msg("fetched records could not be decrypted: the partition's records withheld")
	return nil
}
