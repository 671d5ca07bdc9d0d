package largemessage

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"time"

	"github.com/kproxy/kproxy/internal/largemessage/pointer"
	"github.com/kproxy/kproxy/rewrite/records"
)

// Errors of a value that is not offloaded, for good.
var (
	// errTooLarge: the value is over max_object_bytes.
	errTooLarge = errors.New("value larger than large_messages.max_object_bytes")
	// errChecksum: the producer's LFS_BLOB checksum is not the value's.
	errChecksum = errors.New("the " + pointer.HeaderTrigger + " header's checksum does not match the value")
)

// offloading is the produce path's per-partition state: it uploads each
// value its rule selects and puts the pointer in its place.
type offloading struct {
	f        *Filter
	fn       records.Func // record, bound once
	ctx      context.Context
	topic    string // the client's name, in the object keys
	rule     *rule
	uploaded []string // the object keys of this partition, for orphan cleanup
	txn      int64    // the transactional producer that wrote them, -1 for none
	bytes    int64
	headers  []records.Header
	value    []byte // the pointer
}

func (o *offloading) start(ctx context.Context, topic string, r *rule) {
	o.ctx, o.topic, o.rule = ctx, topic, r
	o.uploaded, o.bytes, o.txn = nil, 0, -1
}

// record offloads one record's value if its rule says so.
func (o *offloading) record(b *records.Batch, r *records.Record) error {
	trigger := -1
	for i, h := range r.Headers {
		if bytes.Equal(h.Key, o.rule.trigger) {
			trigger = i
			break
		}
	}
	if r.Value == nil || (trigger < 0 && int64(len(r.Value)) <= o.rule.threshold) {
		return nil
	}
	if int64(len(r.Value)) > o.f.maxObject {
		return fmt.Errorf("%w: %d bytes, limit %d", errTooLarge, len(r.Value), o.f.maxObject)
	}
	p := pointer.Pointer{Version: pointer.Version, Bucket: o.f.store.Bucket(), CreatedAt: pointer.FormatCreatedAt(time.Now()), ProxyID: o.f.proxyID}
	o.headers = o.headers[:0]
	for i, h := range r.Headers {
		name := strings.ToLower(string(h.Key))
		switch {
		case i == trigger:
			continue // KafScale's proxy removes its trigger
		case name == pointer.HeaderContentType:
			p.ContentType = string(h.Value)
		case string(h.Key) == pointer.HeaderChecksumAlg:
			p.ChecksumAlg = strings.ToLower(string(h.Value))
		}
		if carried(name) {
			if p.OriginalHeaders == nil {
				p.OriginalHeaders = map[string]string{}
			}
			p.OriginalHeaders[string(h.Key)] = string(h.Value)
		}
		o.headers = append(o.headers, h)
	}
	if sent := bytes.TrimSpace(triggerValue(r, trigger)); len(sent) > 0 {
		if err := producerChecksum(&p, sent, r.Value); err != nil {
			return err
		}
	} else {
		p.ChecksumAlg = ""
	}
	p.Key = pointer.ObjectKey(o.f.namespace, o.topic, time.Now(), newID())
	stored, err := o.f.store.Put(o.ctx, p.Key, bytes.NewReader(r.Value), int64(len(r.Value)), p.ContentType)
	if err != nil {
		return err
	}
	o.uploaded = append(o.uploaded, p.Key)
	if b.Transactional() {
		o.txn = b.ProducerID
	}
	o.bytes += stored.Size
	p.Size, p.SHA256 = stored.Size, stored.SHA256
	if p.ChecksumAlg == pointer.ChecksumSHA256 && p.Checksum != p.SHA256 {
		return fmt.Errorf("%w: %s %s, computed %s", errChecksum, p.ChecksumAlg, p.Checksum, p.SHA256)
	}
	enc, err := pointer.Encode(p)
	if err != nil {
		return err
	}
	o.value = append(o.value[:0], enc...)
	r.Value = o.value
	r.Headers = o.headers
	return nil
}

// producerChecksum records the checksum the producer sent in the trigger
// header and checks the ones computed here (md5, crc32); SHA-256 is
// checked against the upload's.
func producerChecksum(p *pointer.Pointer, sent, value []byte) error {
	alg := p.ChecksumAlg
	if alg == "" {
		alg = pointer.ChecksumSHA256
	}
	p.ChecksumAlg, p.Checksum = alg, strings.ToLower(string(sent))
	var got string
	switch alg {
	case pointer.ChecksumSHA256:
		return nil
	case pointer.ChecksumMD5:
		sum := md5.Sum(value)
		got = hex.EncodeToString(sum[:])
	case pointer.ChecksumCRC32:
		got = fmt.Sprintf("%08x", crc32.ChecksumIEEE(value))
	case pointer.ChecksumNone: // as KafScale's proxy refuses it
		return fmt.Errorf("%w: a checksum given with %s none", errChecksum, pointer.HeaderChecksumAlg)
	default:
		return fmt.Errorf("%w: unknown algorithm %q in %s", errChecksum, alg, pointer.HeaderChecksumAlg)
	}
	if got != p.Checksum {
		return fmt.Errorf("%w: %s %s, computed %s", errChecksum, alg, p.Checksum, got)
	}
	return nil
}

// triggerValue is the value of r's trigger header at i, nil for none.
func triggerValue(r *records.Record, i int) []byte {
	if i < 0 {
		return nil
	}
	return r.Headers[i].Value
}

// carried reports whether a header (its name in lower case) is copied
// into the pointer's original_headers.
func carried(name string) bool {
	for _, c := range pointer.CarriedHeaders() {
		if name == c {
			return true
		}
	}
	return false
}

// newID is a random (version 4) UUID, as KafScale's object ids are.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
