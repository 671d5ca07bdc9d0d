package encryption

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/encryption/envelope"
	"github.com/kproxy/kproxy/internal/kms"
	"github.com/kproxy/kproxy/internal/refusal"
	"github.com/kproxy/kproxy/rewrite/records"
)

// produceKMSError is what a partition gets when its records cannot be
// encrypted for now (the KMS unreachable, throttling, its key missing with
// on_missing_key: reject): REQUEST_TIMED_OUT, which every client retries
// with the same producer sequence numbers, so that an idempotent producer
// neither loses nor duplicates records once the KMS answers again.
var produceKMSError = kerr.RequestTimedOut

// produce encrypts the partitions of the topics the rules match and
// refuses, per partition, what cannot be encrypted: nothing that should
// be encrypted is forwarded in the clear.
func (f *Filter) produce(_ *filter.Conn, req *kmsg.ProduceRequest) filter.Verdict {
	rs := f.rules.Load()
	w := f.worker()
	defer f.done(w)
	ctx, cancel := context.WithTimeout(context.Background(), kms.DefaultCallTimeout)
	defer cancel()
	var refused refusal.Produce
	sealed := &heldRecordBufs{pool: f.recordBufs}
	modified := refused.Rewrite(req, &f.names, f.unnamedTopic, func(_ *kmsg.ProduceRequestTopic, name string) refusal.PartitionFunc {
		r, match := rs.find(name)
		keyName := ""
		if match {
			keyName = string(r.key.AppendName(nil, f.vc, name))
			f.keyNames.Store(keyName, struct{}{})
		}
		return func(p *kmsg.ProduceRequestTopicPartition) ([]byte, bool, *kerr.Error, string) {
			out, changed, err := f.sealPartition(ctx, w, sealed, keyName, name, r, p.Records)
			if err != nil && match && rs.passthrough && errors.Is(err, kms.ErrKeyUnavailable) {
				f.passedInClear(name, keyName, err)
				out, changed, err = f.sealPartition(ctx, w, sealed, "", name, nil, p.Records) // only the marker check
			}
			if err != nil {
				code, reason := f.produceRefusal(err, name, keyName, p.Partition)
				f.metrics.failed(opEncrypt, reason, name, p.Partition)
				return nil, false, code, err.Error()
			}
			return out, changed, nil, ""
		}
	})
	v := refused.Verdict(req, modified, "encrypted", nil)
	if v.Modified && v.Respond == nil && v.Close == nil {
		v.Release = sealed.releaser()
	}
	return v
}

// unnamedTopic logs a produce to a topic id no metadata response has
// named, which is refused.
func (f *Filter) unnamedTopic(id [16]byte) {
	f.log.Warn().Hex("topic_id", id[:]).Msg("produce to an unnamed topic id refused: its records might need encryption")
}

// sealPartition rewrites one partition's records: sealed under the
// topic's KEK keyName, or, with keyName "", only checked for the marker.
// A buffer sealed into is added to sealed, which the engine releases once
// the request is written upstream.
func (f *Filter) sealPartition(ctx context.Context, w *worker, sealed *heldRecordBufs, keyName, topic string, r *rule, src []byte) ([]byte, bool, error) {
	if len(src) == 0 {
		return src, false, nil
	}
	parts := r.partsOrNone()
	w.seal.start(ctx, keyName, f.brokerTopic(topic), parts)
	var dst []byte
	var buf *[]byte
	if keyName != "" {
		// Sized once for the sealed records (uncompressed; compressed
		// batches grow it as they need): growing it by appends would
		// allocate and copy it several times over.
		buf = f.recordBufs.get(len(src) + records.CountRecords(src)*w.seal.growth(parts))
		dst = *buf
	}
	out, sum, err := w.rw.Rewrite(dst, src, w.seal.fn)
	if buf != nil {
		sealed.keep(buf, out, err == nil && sum.Changed > 0)
	}
	if err != nil {
		return nil, false, err
	}
	if err := sum.Incomplete(); err != nil {
		return nil, false, err
	}
	if keyName != "" && sum.Legacy > 0 {
		return nil, false, fmt.Errorf("%w: %d message sets of magic 0 or 1 cannot carry the encryption header", errLegacy, sum.Legacy)
	}
	f.metrics.encrypted.Add(float64(w.seal.recorded))
	return out, sum.Changed > 0, nil
}

// errLegacy: records in a format older than record batches.
var errLegacy = errors.New("legacy message format")

// partsOrNone is r's parts, none without a rule.
func (r *rule) partsOrNone() envelope.Parts {
	if r == nil {
		return 0
	}
	return r.parts
}

// produceRefusal is the error code of a partition whose records could not
// be encrypted, the failure reason for the metric, and the log line.
func (f *Filter) produceRefusal(err error, topic, keyName string, partition int32) (*kerr.Error, string) {
	code, reason := produceKMSError, "kms_unavailable"
	switch {
	case errors.Is(err, errClientMarker):
		code, reason = kerr.InvalidRecord, "client_marker"
	case errors.Is(err, kms.ErrKeyUnavailable):
		reason = "key_unavailable"
	case errors.Is(err, kms.ErrRejected):
		reason = "kms_rejected"
	case errors.Is(err, errLegacy):
		code, reason = kerr.UnsupportedForMessageFormat, "legacy_format"
	case errors.Is(err, records.ErrTooLarge):
		code, reason = kerr.MessageTooLarge, "too_large"
	case errors.Is(err, records.ErrMalformed), errors.Is(err, records.ErrCorrupt):
		code, reason = kerr.CorruptMessage, "malformed"
	case errors.Is(err, kms.ErrRetriable):
	default:
		reason = "internal"
	}
	f.log.Warn().Err(err).Str("topic", topic).Int32("partition", partition).Str("key", keyName).
		Str("reason", reason).Str("error_code", code.Message).Msg("produce partition refused: its records could not be encrypted")
	return code, reason
}

// passedInClear logs, once per topic, that on_missing_key: passthrough
// let a topic's records through unencrypted.
func (f *Filter) passedInClear(topic, keyName string, err error) {
	if _, logged := f.passthrough.LoadOrStore(topic, struct{}{}); logged {
		return
	}
	f.log.Warn().Err(err).Str("topic", topic).Str("key", keyName).
		Msg("encryption key missing: records stored in the clear (on_missing_key: passthrough); logged once per topic")
}
