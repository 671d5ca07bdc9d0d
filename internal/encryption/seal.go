package encryption

import (
	"context"
	"errors"
	"fmt"

	"github.com/kproxy/kproxy/internal/encryption/envelope"
	"github.com/kproxy/kproxy/internal/kms"
	"github.com/kproxy/kproxy/rewrite/records"
)

// errClientMarker: a produced record already carries the marker header.
var errClientMarker = errors.New("record already carries the " + envelope.HeaderName + " header")

// sealing is the produce path's per-partition state: it seals each record
// of one partition under the active DEK of the topic's KEK.
type sealing struct {
	f          *Filter
	fn         records.Func // record, bound once
	ctx        context.Context
	keyName    string // "": only check for the marker
	topic      string // broker-side name, bound into the authenticated data
	parts      envelope.Parts
	left       int32 // records of the current batch not yet sealed
	sealer     *envelope.Sealer
	buf        []byte
	headers    []records.Header
	recorded   int
	markerName []byte // envelope.HeaderName, as records carry it
	markerLen  int    // of the last marker attached: to size outputs
	value      sealedValue
}

// sealedValue seals the record value at hand straight into the rewritten
// batch (a records.ValueWriter): no copy of the ciphertext in between.
type sealedValue struct {
	s     *sealing
	plain []byte // the record's value, valid until the next record
}

func (v *sealedValue) ValueLen() int { return len(v.plain) + envelope.Overhead }

func (v *sealedValue) AppendValue(dst []byte) ([]byte, error) {
	out, err := v.s.sealer.SealValue(dst, v.s.parts, v.s.topic, v.plain)
	if err != nil {
		return out, v.s.sealFailed(err)
	}
	return out, nil
}

// start prepares the state for a partition; keyName "" only checks.
func (s *sealing) start(ctx context.Context, keyName, topic string, parts envelope.Parts) {
	s.ctx, s.keyName, s.topic, s.parts = ctx, keyName, topic, parts
	s.left, s.sealer, s.recorded = 0, nil, 0
}

// record seals one record: its value and header values as parts says,
// and adds the marker header.
func (s *sealing) record(b *records.Batch, r *records.Record) error {
	for _, h := range r.Headers {
		if envelope.IsMarker(h.Key) {
			return errClientMarker
		}
	}
	if s.keyName == "" {
		return nil
	}
	if s.left == 0 {
		lease, err := s.f.keys.Reserve(s.ctx, s.keyName, int(b.NumRecords))
		if err != nil {
			return fmt.Errorf("data key under %q: %w", s.keyName, err)
		}
		if s.sealer, err = s.f.sealers.get(s.keyName, lease.DEK); err != nil {
			return err
		}
		s.left = b.NumRecords
	}
	s.left--
	marker, err := s.sealer.Marker(s.parts)
	if err != nil {
		return err
	}
	s.markerLen = len(marker)
	s.buf = s.buf[:0]
	if s.parts&envelope.Value != 0 && r.Value != nil {
		s.value.plain = r.Value
		r.ValueFrom = &s.value
	}
	s.headers = append(s.headers[:0], r.Headers...)
	if s.parts&envelope.HeaderValues != 0 {
		for i := range s.headers {
			h := &s.headers[i]
			if h.Value == nil {
				continue
			}
			start := len(s.buf)
			if s.buf, err = s.sealer.SealHeader(s.buf, s.parts, s.topic, h.Key, h.Value); err != nil {
				return s.sealFailed(err)
			}
			h.Value = s.buf[start:len(s.buf):len(s.buf)]
		}
	}
	r.Headers = append(s.headers, records.Header{Key: s.markerName, Value: marker})
	s.headers = r.Headers
	s.recorded++
	return nil
}

// growth is about how many bytes sealing adds to a record with parts
// sealed: the value's nonce and tag, the marker header (its name, the
// last marker's value, or a guess of 512 bytes before the first, and
// their lengths) and the larger record length. Sealed header values add
// more; the output grows for those.
func (s *sealing) growth(parts envelope.Parts) int {
	markerLen := s.markerLen
	if markerLen == 0 {
		markerLen = 512 // a KEK ARN and a KMS ciphertext blob
	}
	n := len(s.markerName) + markerLen + 8
	if parts&envelope.Value != 0 {
		n += envelope.Overhead
	}
	return n
}

// sealFailed retires a DEK that has sealed all it may: the producer's
// retry gets a new one.
func (s *sealing) sealFailed(err error) error {
	if errors.Is(err, envelope.ErrDEKExhausted) {
		s.f.keys.Retire(s.keyName)
		return fmt.Errorf("%w: %w", kms.ErrRetriable, err)
	}
	return err
}
