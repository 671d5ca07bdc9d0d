package encryption

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/kproxy/kproxy/internal/encryption/envelope"
	"github.com/kproxy/kproxy/rewrite/records"
)

// errTopicUnnamed: a fetched record is encrypted, but the response names
// its topic by an id no metadata response named, and the topic is bound
// into the record's authenticated data.
var errTopicUnnamed = errors.New("encrypted record of a topic id not yet named by a metadata response")

// opening is the fetch path's per-partition state: it opens each record
// carrying the marker and drops the marker header.
type opening struct {
	f         *Filter
	fn        records.Func // record, bound once
	ctx       context.Context
	topic     string // broker-side name; "" unknown
	buf       []byte
	headers   []records.Header
	opened    int
	badOffset int64 // the record that failed, for the log line
	value     openedValue
	// lastWrapped (a copy: a compressed batch's records are
	// decompressed into a buffer the next batch reuses) and lastOpener:
	// the previous opened record's wrapped DEK and its Opener.
	lastWrapped []byte
	lastOpener  *envelope.Opener
}

// openedValue opens the record value at hand straight into the rewritten
// batch (a records.ValueWriter): no copy of the plaintext in between.
type openedValue struct {
	o      *opening
	opener *envelope.Opener
	marker envelope.Marker // the record's, valid until the next record
	sealed []byte
}

func (v *openedValue) ValueLen() int { return len(v.sealed) - envelope.Overhead }

func (v *openedValue) AppendValue(dst []byte) ([]byte, error) {
	out, err := v.opener.OpenValue(dst, v.marker, v.o.topic, v.sealed)
	if err != nil {
		return out, err
	}
	v.o.badOffset = -1
	return out, nil
}

func (o *opening) start(ctx context.Context, topic string) {
	o.ctx, o.topic, o.opened, o.badOffset = ctx, topic, 0, -1
	o.lastOpener = nil
}

// opener is the Opener of m's data key. A partition's records are
// nearly all sealed under one DEK: the previous record's Opener is
// reused when its wrapped DEK is the same bytes, without the caches'
// locks and the hashing of a wrapped key per record. The memo lasts one
// partition (start clears it), so a KEK disabled since is seen at the
// next fetch.
func (o *opening) opener(m envelope.Marker) (*envelope.Opener, error) {
	if o.lastOpener != nil && bytes.Equal(m.Wrapped, o.lastWrapped) {
		return o.lastOpener, nil
	}
	dek, err := o.f.keys.Unwrap(o.ctx, m.Wrapped)
	if err != nil {
		return nil, fmt.Errorf("data key of KEK %q: %w", m.KEKID, err)
	}
	opener, err := o.f.openers.get(dek)
	if err != nil {
		return nil, err
	}
	o.lastWrapped, o.lastOpener = append(o.lastWrapped[:0], m.Wrapped...), opener
	return opener, nil
}

// record opens one record if it carries the marker; others pass as
// they are.
func (o *opening) record(b *records.Batch, r *records.Record) error {
	at := -1
	for i, h := range r.Headers {
		if envelope.IsMarker(h.Key) {
			at = i
			break
		}
	}
	if at < 0 {
		return nil
	}
	o.badOffset = b.BaseOffset + int64(r.OffsetDelta)
	if o.topic == "" {
		return errTopicUnnamed
	}
	m, err := envelope.ParseMarker(r.Headers[at].Value)
	if err != nil {
		return err
	}
	opener, err := o.opener(m)
	if err != nil {
		return err
	}
	o.buf = o.buf[:0]
	openValue := m.Parts&envelope.Value != 0 && r.Value != nil
	if openValue && len(r.Value) < envelope.Overhead {
		_, err := opener.OpenValue(nil, m, o.topic, r.Value) // too short: its error
		return err
	}
	o.headers = o.headers[:0]
	for i, h := range r.Headers {
		if i == at {
			continue
		}
		if m.Parts&envelope.HeaderValues != 0 && h.Value != nil {
			start := len(o.buf)
			if o.buf, err = opener.OpenHeader(o.buf, m, o.topic, h.Key, h.Value); err != nil {
				return fmt.Errorf("header %q: %w", h.Key, err)
			}
			h.Value = o.buf[start:len(o.buf):len(o.buf)]
		}
		o.headers = append(o.headers, h)
	}
	r.Headers = o.headers
	o.opened++
	if openValue {
		// Opened as the rewriter writes the record; badOffset stays
		// until then.
		o.value.opener, o.value.marker, o.value.sealed = opener, m, r.Value
		r.ValueFrom = &o.value
		return nil
	}
	o.badOffset = -1
	return nil
}
