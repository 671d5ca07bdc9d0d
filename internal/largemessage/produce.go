package largemessage

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/largemessage/pointer"
	"github.com/kproxy/kproxy/internal/objectstore"
	"github.com/kproxy/kproxy/internal/refusal"
	"github.com/kproxy/kproxy/rewrite/records"
)

// produceStoreError is what a partition gets when a value cannot be
// stored for now (the store unreachable, throttling, failing on its side,
// or refusing the request): REQUEST_TIMED_OUT, which every client retries
// with the same producer sequence numbers, so that an idempotent producer
// neither loses nor duplicates records once the store answers again.
var produceStoreError = kerr.RequestTimedOut

// uploads are the objects one produce request stored, by partition, until
// the upstream answers.
type uploads struct {
	byPartition map[topicPartition][]string
	txn         int64 // the transactional producer's id, -1 for none
}

type topicPartition struct {
	topic     string
	id        [16]byte
	partition int32
}

// produce offloads the values the rules select and refuses, per
// partition, what cannot be offloaded: the request is forwarded only once
// the store holds every value its pointers name.
func (f *Filter) produce(_ *filter.Conn, req *kmsg.ProduceRequest) filter.Verdict {
	rs := f.rules.Load()
	if len(rs.list) == 0 {
		return filter.Verdict{}
	}
	w := f.worker()
	defer f.done(w)
	ctx := context.Background()
	var refused refusal.Produce
	up := uploads{txn: -1}
	modified := refused.Rewrite(req, &f.names, f.unnamedTopic, func(t *kmsg.ProduceRequestTopic, name string) refusal.PartitionFunc {
		r, match := rs.find(name)
		if !match {
			return nil
		}
		wireName, id := t.Topic, t.TopicID // as the response names the topic
		return func(p *kmsg.ProduceRequestTopicPartition) ([]byte, bool, *kerr.Error, string) {
			out, changed, err := f.offloadPartition(ctx, w, name, r, p.Records)
			if err != nil {
				f.orphans(w.offload.uploaded, "partition refused")
				code, reason := f.produceRefusal(err, name, p.Partition)
				f.metrics.failed(opOffload, reason, name, p.Partition)
				return nil, false, code, err.Error()
			}
			if changed {
				if up.byPartition == nil {
					up.byPartition = map[topicPartition][]string{}
				}
				up.byPartition[topicPartition{wireName, id, p.Partition}] = w.offload.uploaded
				if w.offload.txn >= 0 {
					up.txn = w.offload.txn
				}
				f.metrics.uploaded.Add(float64(len(w.offload.uploaded)))
				f.metrics.uploadedBytes.Add(float64(w.offload.bytes))
			}
			return out, changed, nil, ""
		}
	})
	var then func(*kmsg.ProduceResponse)
	if len(up.byPartition) > 0 {
		then = func(resp *kmsg.ProduceResponse) { f.acknowledged(resp, up) }
	}
	return refused.Verdict(req, modified, "offloaded", then)
}

// offloadPartition rewrites one partition's records under rule r.
func (f *Filter) offloadPartition(ctx context.Context, w *worker, topic string, r *rule, src []byte) ([]byte, bool, error) {
	w.offload.start(ctx, topic, r)
	if len(src) == 0 || cannotOffload(src, r) {
		return src, false, nil
	}
	out, sum, err := w.rw.Rewrite(nil, src, w.offload.fn)
	if err != nil {
		return nil, false, err
	}
	if err := sum.Incomplete(); err != nil {
		return nil, false, err
	}
	if sum.Legacy > 0 { // their values are not read: none may pass unchecked
		return nil, false, fmt.Errorf("%w: %d message sets of magic 0 or 1", errLegacy, sum.Legacy)
	}
	return out, sum.Changed > 0, nil
}

// errLegacy: records in a format older than record batches, which the
// filter does not read.
var errLegacy = errors.New("legacy message format")

// unnamedTopic logs a produce to a topic id no metadata response has
// named, which is refused.
func (f *Filter) unnamedTopic(id [16]byte) {
	f.log.Warn().Hex("topic_id", id[:]).Msg("produce to an unnamed topic id refused: its values might need offloading")
}

// acknowledged sees the upstream's answer to a produce whose values were
// stored: the objects of a partition it refused are orphans; those of a
// transaction wait for its end.
func (f *Filter) acknowledged(resp *kmsg.ProduceResponse, up uploads) {
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			keys, ok := up.byPartition[topicPartition{t.Topic, t.TopicID, p.Partition}]
			if !ok {
				continue
			}
			if p.ErrorCode != 0 {
				f.orphans(keys, "produce refused by the cluster: "+kerr.ErrorForCode(p.ErrorCode).Error())
				continue
			}
			if up.txn >= 0 {
				f.txns.add(up.txn, keys)
			}
		}
	}
}

// produceRefusal is the error code of a partition whose values could not
// be offloaded, the failure reason for the metric, and the log line.
func (f *Filter) produceRefusal(err error, topic string, partition int32) (*kerr.Error, string) {
	code, reason := produceStoreError, "store_unavailable"
	switch {
	case errors.Is(err, errTooLarge), errors.Is(err, records.ErrTooLarge):
		code, reason = kerr.MessageTooLarge, "too_large"
	case errors.Is(err, errChecksum), errors.Is(err, pointer.ErrInvalid):
		code, reason = kerr.InvalidRecord, "checksum"
	case errors.Is(err, errLegacy):
		code, reason = kerr.UnsupportedForMessageFormat, "legacy_format"
	case errors.Is(err, records.ErrMalformed), errors.Is(err, records.ErrCorrupt):
		code, reason = kerr.CorruptMessage, "malformed"
	case errors.Is(err, objectstore.ErrRejected):
		reason = "store_rejected"
	case errors.Is(err, objectstore.ErrRetriable):
	default:
		reason = "internal"
	}
	f.log.Warn().Err(err).Str("topic", topic).Int32("partition", partition).
		Str("reason", reason).Str("error_code", code.Message).Msg("produce partition refused: its values could not be offloaded")
	return code, reason
}
