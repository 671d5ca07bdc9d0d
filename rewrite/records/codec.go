package records

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// codecs holds one Rewriter's compression state, created on first use of
// each codec and reused after: codec state is what costs allocations.
type codecs struct {
	limit int // most bytes a batch may decompress to

	src  bytes.Reader // the compressed input of gzip and lz4
	sink appendWriter // the compressed output of gzip and lz4

	gzipR *gzip.Reader
	gzipW *gzip.Writer
	lz4R  *lz4.Reader
	lz4W  *lz4.Writer
	zstdD *zstd.Decoder
	zstdE *zstd.Encoder
}

// appendWriter is an io.Writer appending to a reused slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// xerialHeader starts the snappy framing of the Java snappy library's
// stream, which Java producers write: a magic, then version 1 and minimum
// compatible version 1. Blocks follow, each a big endian length and a raw
// snappy block.
var xerialHeader = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}

// xerialBlockSize is the block size the Java stream writes.
const xerialBlockSize = 32 << 10

// isXerial reports whether snappy data uses the xerial framing (only the
// first 8 bytes are the magic; the versions vary between writers).
func isXerial(b []byte) bool {
	return len(b) > 16 && bytes.Equal(b[:8], xerialHeader[:8])
}

// decompress returns the decompressed in, in dst's memory when it is large
// enough; more than c.limit bytes is ErrTooLarge.
func (c *codecs) decompress(codec Codec, in, dst []byte) ([]byte, error) {
	switch codec {
	case CodecGzip:
		c.src.Reset(in)
		if c.gzipR == nil {
			c.gzipR = new(gzip.Reader)
		}
		if err := c.gzipR.Reset(&c.src); err != nil {
			return nil, fmt.Errorf("%w: gzip: %w", ErrMalformed, err)
		}
		return c.readAll(dst, c.gzipR)
	case CodecLZ4:
		c.src.Reset(in)
		if c.lz4R == nil {
			c.lz4R = lz4.NewReader(nil)
		}
		c.lz4R.Reset(&c.src)
		return c.readAll(dst, c.lz4R)
	case CodecSnappy:
		if isXerial(in) {
			return c.unxerial(dst[:0], in[16:])
		}
		return c.unsnappy(dst[:0], in)
	case CodecZstd:
		if c.zstdD == nil {
			d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxMemory(uint64(c.limit)))
			if err != nil {
				return nil, fmt.Errorf("zstd decoder: %w", err)
			}
			c.zstdD = d
		}
		out, err := c.zstdD.DecodeAll(in, dst[:0])
		switch {
		case errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded):
			return nil, fmt.Errorf("%w: zstd: %w", ErrTooLarge, err)
		case err != nil:
			return nil, fmt.Errorf("%w: zstd: %w", ErrMalformed, err)
		case len(out) > c.limit:
			return nil, fmt.Errorf("%w: zstd data decompresses to more than %d bytes", ErrTooLarge, c.limit)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: unknown codec %d", ErrMalformed, codec)
}

// readAll reads r into dst's memory, failing once it has read more than
// c.limit bytes: a decompression bomb costs at most the limit.
func (c *codecs) readAll(dst []byte, r io.Reader) ([]byte, error) {
	dst = dst[:0]
	for {
		if len(dst) == cap(dst) {
			dst = slices.Grow(dst, min(max(cap(dst), 4<<10), c.limit+1-len(dst)))
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst) > c.limit {
			return nil, fmt.Errorf("%w: data decompresses to more than %d bytes", ErrTooLarge, c.limit)
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
	}
}

// unsnappy decodes one raw snappy block, checking the length it declares
// before decoding into it.
func (c *codecs) unsnappy(dst, block []byte) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return nil, fmt.Errorf("%w: snappy: %w", ErrMalformed, err)
	}
	if n > c.limit-len(dst) {
		return nil, fmt.Errorf("%w: snappy data decompresses to more than %d bytes", ErrTooLarge, c.limit)
	}
	dst = slices.Grow(dst, n)
	if _, err := s2.Decode(dst[len(dst):len(dst)+n], block); err != nil {
		return nil, fmt.Errorf("%w: snappy: %w", ErrMalformed, err)
	}
	return dst[:len(dst)+n], nil
}

// unxerial decodes the blocks of xerial framed snappy.
func (c *codecs) unxerial(dst, blocks []byte) ([]byte, error) {
	for len(blocks) > 0 {
		if len(blocks) < 4 {
			return nil, fmt.Errorf("%w: xerial snappy block header cut short", ErrMalformed)
		}
		size := binary.BigEndian.Uint32(blocks)
		blocks = blocks[4:]
		if uint64(size) > uint64(len(blocks)) {
			return nil, fmt.Errorf("%w: xerial snappy block of %d bytes, %d left", ErrMalformed, size, len(blocks))
		}
		var err error
		if dst, err = c.unsnappy(dst, blocks[:size]); err != nil {
			return nil, err
		}
		blocks = blocks[size:]
	}
	return dst, nil
}

// compress appends in compressed with codec to dst; xerial chooses the
// xerial framing for snappy.
func (c *codecs) compress(codec Codec, xerial bool, in, dst []byte) ([]byte, error) {
	switch codec {
	case CodecGzip:
		if c.gzipW == nil {
			c.gzipW = gzip.NewWriter(nil)
		}
		return c.stream(c.gzipW, in, dst)
	case CodecLZ4:
		if c.lz4W == nil {
			c.lz4W = lz4.NewWriter(nil)
			// Kafka's Java clients write 64 KiB blocks; the default 4 MiB
			// would cost each Rewriter 4 MiB of buffer.
			// Nor do they write the frame's content checksum (the batch's
			// CRC covers the bytes already): hashing every byte again
			// cost a tenth of re-encoding an lz4 batch.
			if err := c.lz4W.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false)); err != nil {
				return nil, fmt.Errorf("lz4 writer: %w", err)
			}
		}
		return c.stream(c.lz4W, in, dst)
	case CodecSnappy:
		if !xerial {
			return appendSnappy(dst, in), nil
		}
		dst = append(dst, xerialHeader...)
		for len(in) > 0 {
			n := min(len(in), xerialBlockSize)
			at := len(dst)
			dst = appendSnappy(append(dst, 0, 0, 0, 0), in[:n])
			binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
			in = in[n:]
		}
		return dst, nil
	case CodecZstd:
		if c.zstdE == nil {
			// As Kafka's clients: a 64 KiB window keeps the
			// consumer's memory small.
			e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(64<<10), zstd.WithZeroFrames(true))
			if err != nil {
				return nil, fmt.Errorf("zstd encoder: %w", err)
			}
			c.zstdE = e
		}
		return c.zstdE.EncodeAll(in, dst), nil
	}
	return nil, fmt.Errorf("%w: unknown codec %d", ErrMalformed, codec)
}

// streamWriter is a reusable compressing writer (gzip, lz4).
type streamWriter interface {
	io.WriteCloser
	Reset(io.Writer)
}

func (c *codecs) stream(w streamWriter, in, dst []byte) ([]byte, error) {
	c.sink.b = dst
	w.Reset(&c.sink)
	_, err := w.Write(in)
	if err == nil {
		err = w.Close()
	}
	out := c.sink.b
	c.sink.b = nil // the caller owns dst
	w.Reset(nil)
	if err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	return out, nil
}

// appendSnappy appends one raw snappy block of in, encoding in place.
func appendSnappy(dst, in []byte) []byte {
	at := len(dst)
	dst = slices.Grow(dst, s2.MaxEncodedLen(len(in)))
	block := s2.EncodeSnappy(dst[at:cap(dst)], in)
	return dst[:at+len(block)]
}
