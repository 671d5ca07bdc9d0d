package records

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
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
	// Unread counts the batches RewriteMarked passed on without reading
	// their records, for want of the mark.
	Unread int
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

	out     output   // the Rewrite call at hand
	mark    []byte   // RewriteMarked's: batches without it are not read
	plain   []byte   // the decompressed records of a compressed batch
	encoded []byte   // the records of a changed compressed batch, re-encoded
	headers []Header // the decoded headers of the record at hand
	orig    []Header // what the Func was handed in headers
	hdr     Batch    // the header handed to the Func
	rec     Record   // the record handed to the Func
	origRec Record   // what the Func was handed in rec
	// spliced are the spliced values of the batch at hand, at offsets
	// into its records.
	spliced []splicedAt
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
	rw.out = output{dst: dst, src: src}
	defer func() { rw.out = output{} }() // keep neither the caller's src nor dst
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
		start := at
		at += int(size)
		if size <= magicAt {
			return nil, sum, fmt.Errorf("%w: batch of %d bytes at byte %d", ErrMalformed, size, start)
		}
		switch magic := int8(raw[magicAt]); {
		case magic == 0 || magic == 1:
			sum.Legacy++
			continue
		case magic != 2:
			return nil, sum, fmt.Errorf("%w: magic %d at byte %d", ErrMalformed, magic, start)
		case size > int64(rw.limit):
			return nil, sum, fmt.Errorf("%w: batch of %d bytes at byte %d, limit %d", ErrTooLarge, size, start, rw.limit)
		case size < headerSize:
			return nil, sum, fmt.Errorf("%w: batch of %d bytes at byte %d", ErrMalformed, size, start)
		}
		sum.Batches++
		rw.hdr = parseBatch(raw)
		b := &rw.hdr
		recordFn := fn
		if b.Control() {
			recordFn = nil // checked, but not the Func's to see
		}
		rw.out.batchAt = start
		changed, err := rw.batch(b, raw, recordFn, &sum)
		if err != nil {
			return nil, sum, fmt.Errorf("batch at offset %d: %w", b.BaseOffset, err)
		}
		if changed {
			sum.Changed++
			rw.out.emitted = at
		}
	}
	if sum.Changed == 0 {
		return src, sum, nil
	}
	return append(rw.out.dst, src[rw.out.emitted:]...), sum, nil
}

// RewriteMarked is Rewrite for a fn that changes only records holding
// mark (a header name, say): a batch whose records do not hold its bytes
// anywhere is passed on without its records decoded, nor, uncompressed,
// its CRC checked (the consumer checks it, as without a proxy). A
// compressed batch is still decompressed to look.
func (rw *Rewriter) RewriteMarked(dst, src, mark []byte, fn Func) ([]byte, Summary, error) {
	rw.mark = mark
	defer func() { rw.mark = nil }()
	return rw.Rewrite(dst, src, fn)
}

// output is what one Rewrite call writes: dst, and how much of src it
// holds already.
type output struct {
	dst, src []byte
	emitted  int // src[:emitted] is in dst, as is or rewritten
	batchAt  int // where in src the batch at hand starts
	headerAt int // where in dst the batch at hand's rewritten header starts
}

// begin starts the rewritten form of the batch at hand in dst: the bytes
// of src before it, then its header (raw[:headerSize]).
func (o *output) begin(raw []byte) {
	if o.dst == nil {
		// The first batch to change: the output is about the input's
		// size, and growing it by appends would copy it several times.
		o.dst = make([]byte, 0, len(o.src))
	}
	o.dst = append(o.dst, o.src[o.emitted:o.batchAt]...)
	o.headerAt = len(o.dst)
	o.dst = append(o.dst, raw[:headerSize]...)
}

// finish sets the length and CRC of the batch begin started, now that
// its records follow it in dst: one CRC pass over the bytes as they go
// out.
func (o *output) finish() {
	batch := o.dst[o.headerAt:]
	binary.BigEndian.PutUint32(batch[lengthAt:], uint32(len(batch)-logOverhead))
	binary.BigEndian.PutUint32(batch[crcAt:], crc32.Checksum(batch[attributesAt:], castagnoli))
}

// batch checks raw, hands its records to fn (unless nil), and, if fn
// changed any, writes the rewritten batch to rw.out, compressed as raw's
// records were: uncompressed records straight into it, compressed ones
// re-encoded in rw.encoded and compressed into it.
func (rw *Rewriter) batch(b *Batch, raw []byte, fn Func, sum *Summary) (changed bool, err error) {
	codec := b.Codec()
	if rw.mark != nil && codec == CodecNone && !bytes.Contains(raw[headerSize:], rw.mark) {
		sum.Unread++
		return false, nil
	}
	if crc := crc32.Checksum(raw[attributesAt:], castagnoli); crc != b.CRC {
		return false, fmt.Errorf("%w: computed %#08x, batch says %#08x", ErrCorrupt, crc, b.CRC)
	}
	if b.NumRecords < 0 || int64(b.NumRecords) > int64(len(raw)) {
		return false, fmt.Errorf("%w: record count %d in %d bytes", ErrMalformed, b.NumRecords, len(raw))
	}
	plain := raw[headerSize:]
	if codec != CodecNone {
		if rw.plain, err = rw.codecs.decompress(codec, plain, rw.plain); err != nil {
			return false, err
		}
		plain = rw.plain
		if rw.mark != nil && !bytes.Contains(plain, rw.mark) {
			sum.Unread++
			return false, nil
		}
	}

	direct := codec == CodecNone
	changed, err = rw.records(b, raw, plain, direct, fn, sum)
	if err != nil || !changed {
		return false, err
	}
	if len(rw.spliced) > 0 {
		if !direct { // spliced values go uncompressed: see Spliced
			rw.out.begin(raw)
			rw.out.dst = append(rw.out.dst, rw.encoded...)
		}
		return true, finishSpliced(rw.out.dst[rw.out.headerAt:], rw.spliced)
	}
	if !direct {
		rw.out.begin(raw)
		// Room for the records compressed, if they do not compress
		// (sealed values do not): growing by appends would copy the
		// output several times over.
		rw.out.dst = slices.Grow(rw.out.dst, len(rw.encoded)+len(rw.encoded)/255+64)
		if rw.out.dst, err = rw.codecs.compress(codec, isXerial(raw[headerSize:]), rw.encoded, rw.out.dst); err != nil {
			return false, err
		}
	}
	rw.out.finish()
	return true, nil
}

// records decodes the records of b from plain, hands each to fn (unless
// nil), and re-encodes them once fn has changed one: the unchanged ones
// by copy, the changed ones field by field. direct writes them after the
// batch's header in rw.out, else in rw.encoded.
func (rw *Rewriter) records(b *Batch, raw, plain []byte, direct bool, fn Func, sum *Summary) (changed bool, err error) {
	rd := recordReader{b: plain}
	r, orig := &rw.rec, &rw.origRec
	enc := rw.encoded[:0]
	if direct {
		enc = rw.out.dst
	}
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
		r.Spliced, r.ValueFrom = nil, nil
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
			enc = append(enc, plain[start:rd.pos]...)
		case !same:
			if !changed {
				// The records before this one are unchanged: copy them.
				if direct {
					rw.out.dst = enc
					rw.out.begin(raw)
					enc = rw.out.dst
				}
				enc = append(enc, plain[:start]...)
				changed = true
			}
			if r.Spliced == nil && r.ValueFrom != nil {
				if enc, err = appendRecordFrom(enc, r, r.ValueFrom); err != nil {
					return false, fmt.Errorf("record at offset %d: %w", b.BaseOffset+int64(orig.OffsetDelta), err)
				}
				break
			}
			if r.Spliced == nil {
				enc = appendRecord(enc, r)
				break
			}
			// Offsets into the batch's records: they start after the
			// header rw.out.begin wrote, or at rw.encoded's start.
			base := 0
			if direct {
				base = rw.out.headerAt + headerSize
			}
			var at int
			enc, at = appendSplicedRecord(enc, r, r.Spliced)
			rw.spliced = append(rw.spliced, splicedAt{at: at - base, s: *r.Spliced})
		}
	}
	if rd.pos != len(plain) {
		return false, fmt.Errorf("%w: %d bytes after the %d records the header counts", ErrMalformed, len(plain)-rd.pos, b.NumRecords)
	}
	if direct {
		if changed {
			rw.out.dst = enc
		}
	} else {
		rw.encoded = enc
	}
	return changed, nil
}

// Retained is the capacity of the buffers the Rewriter keeps between
// calls: about the largest batch it has rewritten, decompressed, twice
// over (its codecs' state aside).
func (rw *Rewriter) Retained() int {
	return cap(rw.plain) + cap(rw.encoded) + cap(rw.headers)*48 + cap(rw.orig)*48
}

// Incomplete is the error of a produced partition whose Rewrite summary
// is sum, nil if none: a partial batch at the end, which a Fetch response
// may carry but a Produce request never does, was passed through unread,
// so a filter that must see every record refuses the partition instead.
func (sum Summary) Incomplete() error {
	if sum.Truncated > 0 {
		return fmt.Errorf("%w: a partial batch of %d bytes after the last whole one", ErrMalformed, sum.Truncated)
	}
	return nil
}
