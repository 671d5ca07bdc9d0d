package largemessage

import (
	"context"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"time"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/encryption/envelope"
	"github.com/kproxy/kproxy/internal/errclass"
	"github.com/kproxy/kproxy/internal/largemessage/pointer"
	"github.com/kproxy/kproxy/internal/objectstore"
	"github.com/kproxy/kproxy/rewrite/records"
)

// streamAbove is the size above which a resolved value is streamed to the
// client rather than held: below it, holding the value (charged to
// limits.max_buffered_bytes with the response) costs less than reading
// the object twice.
const streamAbove = 4 << 20

// encrypted reports whether rec carries record encryption's marker: its
// value is decrypted after it is resolved, by a filter that needs the
// value's bytes, so it is held rather than streamed. (A streamed record's
// batch declares the length of the real value, which such a filter
// would take for a truncated batch and pass on undecrypted.)
func encrypted(rec *records.Record) bool {
	for _, h := range rec.Headers {
		if envelope.IsMarker(h.Key) {
			return true
		}
	}
	return false
}

// castagnoli is the CRC-32C table of record batch checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// splice resolves the value p names without holding it: a first read
// checks the object's size and checksum and computes the CRC-32C the
// batch needs, so that a mismatch or a missing object is the partition's
// error before anything is written; the engine then streams a second
// read to the client, checked again as it passes (an object changed in
// between closes the client's connection: no wrong value is delivered
// whole).
func (f *Filter) splice(ctx context.Context, p pointer.Pointer, s *filter.Splicer, topic string, partition int32) (*records.Spliced, error) {
	crc, err := f.scan(ctx, p)
	if err != nil {
		return nil, err
	}
	open := func() (io.ReadCloser, error) {
		ctx, cancel := context.WithCancel(context.Background())
		body, _, err := f.open(ctx, p)
		if err != nil {
			cancel()
			return nil, err
		}
		v, err := newVerifying(body, p, crc, true)
		if err != nil {
			cancel()
			body.Close()
			return nil, err
		}
		v.stalled = cancel
		v.onMismatch = func(err error) {
			f.metrics.failed(opResolve, "changed_while_streaming", topic, partition)
			f.log.Error().Err(err).Str("topic", topic).Int32("partition", partition).Str("key", p.Key).Msg("object changed between its check and its streaming: the client's connection is closed")
		}
		return v, nil
	}
	return &records.Spliced{Placeholder: s.Add(p.Size, open), Size: p.Size, CRC: crc}, nil
}

// scan reads the object p names to its end, checking it, and returns its
// CRC-32C.
func (f *Filter) scan(ctx context.Context, p pointer.Pointer) (uint32, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body, _, err := f.open(ctx, p)
	if err != nil {
		return 0, err
	}
	defer body.Close()
	v, err := newVerifying(body, p, 0, false)
	if err != nil {
		return 0, err
	}
	v.stalled = cancel
	if _, err := io.Copy(io.Discard, v); err != nil {
		return 0, err
	}
	return v.crc.Sum32(), nil
}

// verifying reads an object through, and at its end checks its length,
// the pointer's checksum (when it has one) and, when wantCRC is set, the
// CRC-32C the first read found (checkCRC).
type verifying struct {
	body       io.ReadCloser
	p          pointer.Pointer
	sum        hash.Hash // nil: the pointer carries no checksum
	digest     string
	crc        hash.Hash32
	wantCRC    uint32
	checkCRC   bool
	n          int64
	onMismatch func(error)
	// stalled, when set, cancels the read: called when the store sends
	// nothing for readStall while a Read waits.
	stalled func()
	timer   *time.Timer
	// mismatch is the end-of-object check's failure, kept so that a Read
	// after it reports it again without counting it again.
	mismatch error
}

// readStall is how long a read of an object may wait for the store's
// next bytes: the store client bounds a request until its answer starts,
// not the body.
const readStall = 15 * time.Second

func newVerifying(body io.ReadCloser, p pointer.Pointer, wantCRC uint32, checkCRC bool) (*verifying, error) {
	v := &verifying{body: body, p: p, crc: crc32.New(castagnoli), wantCRC: wantCRC, checkCRC: checkCRC}
	if alg, digest, ok := p.Expected(); ok {
		sum, err := newChecksum(alg)
		if err != nil {
			return nil, err
		}
		v.sum, v.digest = sum, digest
	}
	return v, nil
}

func (v *verifying) Read(b []byte) (int, error) {
	if v.mismatch != nil {
		return 0, v.mismatch
	}
	if v.stalled != nil {
		if v.timer == nil {
			v.timer = time.AfterFunc(readStall, v.stalled)
		} else {
			v.timer.Reset(readStall)
		}
	}
	n, err := v.body.Read(b)
	if v.timer != nil {
		v.timer.Stop()
	}
	v.n += int64(n)
	v.crc.Write(b[:n])
	if v.sum != nil {
		v.sum.Write(b[:n])
	}
	switch {
	case err == io.EOF:
		if cerr := v.check(); cerr != nil {
			v.mismatch = cerr
			if v.onMismatch != nil {
				v.onMismatch(cerr)
			}
			return n, cerr
		}
	case err != nil:
		// The store stopped sending: a retry may get the whole object.
		err = errclass.Mark(objectstore.ErrRetriable, fmt.Errorf("reading s3://%s/%s: %w", v.p.Bucket, v.p.Key, err))
	}
	return n, err
}

// check is the end of the object: what was read must be the value.
func (v *verifying) check() error {
	where := fmt.Sprintf("s3://%s/%s", v.p.Bucket, v.p.Key)
	switch {
	case v.n != v.p.Size:
		return fmt.Errorf("%w: %s sent %d bytes, the pointer says %d", errMismatch, where, v.n, v.p.Size)
	case v.sum != nil && fmt.Sprintf("%x", v.sum.Sum(nil)) != v.digest:
		return fmt.Errorf("%w: %s has another checksum than the pointer's %s", errMismatch, where, v.digest)
	case v.checkCRC && v.crc.Sum32() != v.wantCRC:
		return fmt.Errorf("%w: %s changed since it was checked", errMismatch, where)
	}
	return nil
}

// Close may come from another goroutine than Read's (the engine closes a
// source when its connection closes): it touches only what is safe so.
func (v *verifying) Close() error {
	err := v.body.Close()
	if v.stalled != nil {
		v.stalled() // the request's context
	}
	return err
}
