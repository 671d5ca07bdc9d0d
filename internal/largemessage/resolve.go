package largemessage

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"slices"
	"strings"

	"github.com/kproxy/kproxy/internal/errclass"
	"github.com/kproxy/kproxy/internal/objectstore"

	"github.com/kproxy/kproxy/internal/largemessage/pointer"
	"github.com/kproxy/kproxy/rewrite/records"
)

// Errors of a pointer that is not resolved.
var (
	// errForeign: the pointer names a bucket other than the store's, or a
	// key outside this cluster's prefix: kproxy never reads it, so that a
	// client cannot read another tenant's objects by writing a pointer.
	errForeign = errors.New("pointer names an object outside this cluster's bucket and prefix")
	// errMismatch: the object is not the value the pointer describes.
	errMismatch = errors.New("object does not match its pointer")
	// errFull: the value does not fit what the client asked the response
	// to hold; the batch and those after it wait for its next fetch.
	errFull = errors.New("resolved value does not fit the fetch's max bytes")
)

// resolving is the fetch path's per-partition state: it replaces each
// pointer value by the object it names.
type resolving struct {
	f         *Filter
	fn        records.Func // record, bound once
	ctx       context.Context
	buf       []byte
	resolved  int
	bytes     int64
	room      int64  // bytes the batch may still grow to
	first     bool   // nothing returned yet: the batch goes whatever its size
	badOffset int64  // the record that failed, for the log line
	badKey    []byte // its key, copied
}

func (r *resolving) start(ctx context.Context) {
	r.ctx, r.resolved, r.bytes, r.badOffset, r.badKey = ctx, 0, 0, -1, nil
}

// record resolves one record whose value is a pointer; others pass as
// they are. The record keeps its headers: they are the original's.
func (r *resolving) record(b *records.Batch, rec *records.Record) error {
	if !pointer.Detect(rec.Value) {
		return nil
	}
	r.badOffset, r.badKey = b.BaseOffset+int64(rec.OffsetDelta), append([]byte(nil), rec.Key...)
	p, err := pointer.Decode(rec.Value)
	if err != nil {
		return err
	}
	if r.room -= p.Size; r.room < 0 && !r.first {
		return errFull
	}
	value, err := r.f.download(r.ctx, p, r.buf[:0])
	if err != nil {
		return err
	}
	r.buf = value
	rec.Value = value
	r.resolved++
	r.bytes += int64(len(value))
	r.badOffset, r.badKey = -1, nil
	return nil
}

// download appends the value p names to dst, checking that it is this
// cluster's object, and its size and checksum. It holds the whole value:
// this is where a streamed resolve slots in.
func (f *Filter) download(ctx context.Context, p pointer.Pointer, dst []byte) ([]byte, error) {
	if p.Bucket != f.store.Bucket() || !f.ownKey(p.Key) {
		return nil, fmt.Errorf("%w: s3://%s/%s", errForeign, p.Bucket, p.Key)
	}
	if p.Size > f.maxObject {
		return nil, fmt.Errorf("%w: size %d over max_object_bytes %d", errMismatch, p.Size, f.maxObject)
	}
	body, size, err := f.store.Get(ctx, p.Key)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	if size != p.Size {
		return nil, fmt.Errorf("%w: s3://%s/%s is %d bytes, the pointer says %d", errMismatch, p.Bucket, p.Key, size, p.Size)
	}
	alg, digest, check := p.Expected()
	var sum hash.Hash
	if check {
		if sum, err = newChecksum(alg); err != nil {
			return nil, err
		}
	}
	start := len(dst)
	dst = slices.Grow(dst, int(size))[:start+int(size)]
	if _, err := io.ReadFull(body, dst[start:]); err != nil {
		// The store stopped sending: a retry may get the whole object.
		return nil, errclass.Mark(objectstore.ErrRetriable, fmt.Errorf("reading s3://%s/%s: %w", p.Bucket, p.Key, err))
	}
	if check {
		sum.Write(dst[start:])
		if got := hex.EncodeToString(sum.Sum(nil)); got != digest {
			return nil, fmt.Errorf("%w: s3://%s/%s has %s %s, the pointer says %s", errMismatch, p.Bucket, p.Key, alg, got, digest)
		}
	}
	return dst, nil
}

// ownKey reports whether key is under this cluster's prefix, with no
// empty, "." or ".." segment that a store mapping keys to paths might
// resolve to another prefix.
func (f *Filter) ownKey(key string) bool {
	rest, ok := strings.CutPrefix(key, f.namespace+"/")
	if !ok {
		return false
	}
	for _, seg := range strings.Split(rest, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

func newChecksum(alg string) (hash.Hash, error) {
	switch alg {
	case pointer.ChecksumSHA256:
		return sha256.New(), nil
	case pointer.ChecksumMD5:
		return md5.New(), nil
	case pointer.ChecksumCRC32:
		return crc32.NewIEEE(), nil
	}
	return nil, fmt.Errorf("%w: checksum algorithm %q", errMismatch, alg)
}
