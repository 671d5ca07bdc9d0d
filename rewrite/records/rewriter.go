package records

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// castagnoli is the CRC-32C table of record batch checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Func sees one record of a batch and may change it (see Record). An
// error stops the rewrite: Rewrite returns it, wrapped, and the caller
// refuses the partition.
type Func func(b *Batch, r *Record) error

// Summary says what a Rewrite found.
type Summary struct {
	// Batches counts the v2 record batches, control batches included.
	Batches int
	// Changed counts the batches the Func changed, which were re-encoded.
	Changed int
	// Records counts the records handed to the Func.
	Records int
	// Legacy counts the message sets of magic 0 and 1, passed through
	// unread.
	Legacy int
	// Truncated is the size of a partial batch that ended the input (a
	// Fetch response may end with one), passed through unread.
	Truncated int
}

// Rewriter rewrites the records of record batches, reusing its buffers
// and codec state from call to call. Its zero value is not usable: make
// one with NewRewriter. It is not safe for concurrent use.
type Rewriter struct {
	limit  int
	codecs codecs

	plain   []byte      // the decompressed records of a compressed batch
	encoded []byte      // the records of a changed batch, re-encoded
	packed  []byte      // encoded, recompressed
	headers []Header    // the decoded headers of the record at hand
	orig    []Header    // what the Func was handed in headers
	hdr     Batch       // the header handed to the Func
	rec     Record      // the record handed to the Func
	origRec Record      // what the Func was handed in rec
	spliced []splicedAt // the spliced values of the batch at hand, in encoded
}

// NewRewriter returns a Rewriter for batches of at most maxBatchBytes,
// both as they are on the wire and decompressed; a larger batch is
// ErrTooLarge. A broker's message.max.bytes (1 MiB by default) or a
// client's fetch.max.bytes is a sensible value.
func NewRewriter(maxBatchBytes int) *Rewriter {
	return &Rewriter{limit: maxBatchBytes, codecs: codecs{limit: maxBatchBytes}}
}

// Rewrite hands each record of the record batches in src to fn and
// appends the result to dst: src's bytes, with each batch fn changed
// re-encoded. When fn changed nothing (Summary.Changed is 0), Rewrite
// returns src itself and leaves dst alone, so that an untouched partition
// costs no copy. On error, what it returns besides the error is
// undefined, and the caller must refuse the whole partition: an error
// never leaves some batches rewritten and others not.
//
// src is never written to, and dst must not overlap it. A Func must not
// keep the Record or Batch it is given, nor change the Batch.
func (rw *Rewriter) Rewrite(dst, src []byte, fn Func) ([]byte, Summary, error) {
	var sum Summary
	emitted := 0 // src[:emitted] is in dst already
	for at := 0; at < len(src); {
		rest := src[at:]
		if len(rest) < logOverhead+5 { // up to and including the magic
			sum.Truncated = len(rest)
			break
		}
		length := int64(int32(binary.BigEndian.Uint32(rest[lengthAt:])))
		if length < 0 {
			return nil, sum, fmt.Errorf("%w: negative length %d at byte %d", ErrMalformed, length, at)
		}
		size := logOverhead + length
		if size > int64(len(rest)) {
			sum.Truncated = len(rest)
			break
		}
		raw := rest[:size]
		at += int(size)
		if size <= magicAt {
			return nil, sum, fmt.Errorf("%w: batch of %d bytes at byte %d", ErrMalformed, size, at-len(raw))
		}
		switch magic := int8(raw[magicAt]); {
		case magic == 0 || magic == 1:
			sum.Legacy++
			continue
		case magic != 2:
			return nil, sum, fmt.Errorf("%w: magic %d at byte %d", ErrMalformed, magic, at-len(raw))
		case size > int64(rw.limit):
			return nil, sum, fmt.Errorf("%w: batch of %d bytes at byte %d, limit %d", ErrTooLarge, size, at-len(raw), rw.limit)
		case size < headerSize:
			return nil, sum, fmt.Errorf("%w: batch of %d bytes at byte %d", ErrMalformed, size, at-len(raw))
		}
		sum.Batches++
		rw.hdr = parseBatch(raw)
		b := &rw.hdr
		recordFn := fn
		if b.Control() {
			recordFn = nil // checked, but not the Func's to see
		}
		payload, changed, err := rw.batch(b, raw, recordFn, &sum)
		if err != nil {
			return nil, sum, fmt.Errorf("batch at offset %d: %w", b.BaseOffset, err)
		}
		if !changed {
			continue
		}
		sum.Changed++
		dst = append(dst, src[emitted:at-len(raw)]...)
		if len(rw.spliced) == 0 {
			dst = appendBatch(dst, raw[:headerSize], payload)
		} else if dst, err = appendSplicedBatch(dst, raw[:headerSize], payload, rw.spliced); err != nil {
			return nil, sum, fmt.Errorf("batch at offset %d: %w", b.BaseOffset, err)
		}
		emitted = at
	}
	if sum.Changed == 0 {
		return src, sum, nil
	}
	return append(dst, src[emitted:]...), sum, nil
}

// batch checks raw, hands its records to fn (unless nil), and, if fn
// changed any, returns the batch's new records, compressed as raw's were.
func (rw *Rewriter) batch(b *Batch, raw []byte, fn Func, sum *Summary) (payload []byte, changed bool, err error) {
	if crc := crc32.Checksum(raw[attributesAt:], castagnoli); crc != b.CRC {
		return nil, false, fmt.Errorf("%w: computed %#08x, batch says %#08x", ErrCorrupt, crc, b.CRC)
	}
	if b.NumRecords < 0 || int64(b.NumRecords) > int64(len(raw)) {
		return nil, false, fmt.Errorf("%w: record count %d in %d bytes", ErrMalformed, b.NumRecords, len(raw))
	}
	plain := raw[headerSize:]
	codec := b.Codec()
	if codec != CodecNone {
		if rw.plain, err = rw.codecs.decompress(codec, plain, rw.plain); err != nil {
			return nil, false, err
		}
		plain = rw.plain
	}

	changed, err = rw.records(b, plain, fn, sum)
	if err != nil {
		return nil, false, err
	}
	if !changed {
		return nil, false, nil
	}
	if codec == CodecNone || len(rw.spliced) > 0 { // spliced: see Spliced
		return rw.encoded, true, nil
	}
	if rw.packed, err = rw.codecs.compress(codec, isXerial(raw[headerSize:]), rw.encoded, rw.packed[:0]); err != nil {
		return nil, false, err
	}
	return rw.packed, true, nil
}

// records decodes the records of b from plain, hands each to fn (unless
// nil), and re-encodes them into rw.encoded once fn has changed one:
// the unchanged ones by copy, the changed ones field by field.
func (rw *Rewriter) records(b *Batch, plain []byte, fn Func, sum *Summary) (changed bool, err error) {
	rd := recordReader{b: plain}
	r, orig := &rw.rec, &rw.origRec
	rw.spliced = rw.spliced[:0]
	for i := range b.NumRecords {
		if rd.pos == len(plain) {
			return false, fmt.Errorf("%w: %d records where the header says %d", ErrMalformed, i, b.NumRecords)
		}
		start := rd.pos
		if rw.headers, err = rd.next(r, rw.headers); err != nil {
			return false, err
		}
		if fn == nil {
			continue
		}
		r.Spliced = nil
		*orig = *r
		rw.orig = append(rw.orig[:0], r.Headers...)
		sum.Records++
		if err := fn(b, r); err != nil {
			return false, fmt.Errorf("record at offset %d: %w", b.BaseOffset+int64(orig.OffsetDelta), err)
		}
		r.Attributes, r.TimestampDelta, r.OffsetDelta = orig.Attributes, orig.TimestampDelta, orig.OffsetDelta
		same := sameRecord(r, orig, rw.orig)
		switch {
		case same && changed:
			rw.encoded = append(rw.encoded, plain[start:rd.pos]...)
		case !same:
			if !changed {
				// The records before this one are unchanged: copy them.
				rw.encoded = append(rw.encoded[:0], plain[:start]...)
				changed = true
			}
			if r.Spliced == nil {
				rw.encoded = appendRecord(rw.encoded, r)
				break
			}
			var at int
			rw.encoded, at = appendSplicedRecord(rw.encoded, r, r.Spliced)
			rw.spliced = append(rw.spliced, splicedAt{at: at, s: *r.Spliced})
		}
	}
	if rd.pos != len(plain) {
		return false, fmt.Errorf("%w: %d bytes after the %d records the header counts", ErrMalformed, len(plain)-rd.pos, b.NumRecords)
	}
	return changed, nil
}

// appendBatch appends a batch with header's fields (the first headerSize
// bytes of the original) and records payload, with the length and CRC
// that payload makes.
func appendBatch(dst, header, payload []byte) []byte {
	at := len(dst)
	dst = append(dst, header...)
	dst = append(dst, payload...)
	batch := dst[at:]
	binary.BigEndian.PutUint32(batch[lengthAt:], uint32(len(batch)-logOverhead))
	binary.BigEndian.PutUint32(batch[crcAt:], crc32.Checksum(batch[attributesAt:], castagnoli))
	return dst
}
