package engine

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/kproxy/kproxy/filter"
)

// TestStreamSpliceDeliversExactlyTheValue: a spliced value is copied to
// the client in chunks; a source that fails, ends early or runs long
// after the frame's size was promised ends the connection as a filter's
// failure (filter_closed), never a frame of another length.
func TestStreamSpliceDeliversExactlyTheValue(t *testing.T) {
	value := bytes.Repeat([]byte("0123456789abcdef"), 50_000) // several chunks
	for name, tc := range map[string]struct {
		src  io.Reader
		open error
		ok   bool
	}{
		"the value":          {src: bytes.NewReader(value), ok: true},
		"one byte at a time": {src: iotest.OneByteReader(bytes.NewReader(value)), ok: true},
		"short":              {src: bytes.NewReader(value[:len(value)-1])},
		"long":               {src: bytes.NewReader(append(bytes.Clone(value), 'x'))},
		"failing":            {src: io.MultiReader(bytes.NewReader(value[:100]), iotest.ErrReader(errors.New("store reset")))},
		"not opened":         {open: errors.New("no such object")},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			down := &direction{w: bufio.NewWriterSize(&out, 4096)}
			sp := &filter.Splice{Size: int64(len(value)), Open: func() (io.ReadCloser, error) {
				if tc.open != nil {
					return nil, tc.open
				}
				return io.NopCloser(tc.src), nil
			}}
			err := streamSplice(down, sp, make([]byte, 64<<10), nil)
			down.w.Flush()
			if tc.ok {
				if err != nil || !bytes.Equal(out.Bytes(), value) {
					t.Fatalf("wrote %d bytes, error %v; want the %d of the value", out.Len(), err, len(value))
				}
				return
			}
			var pe *pairError
			if !errors.As(err, &pe) || pe.reason != reasonFilter || !errors.Is(err, errSpliceSource) {
				t.Fatalf("error %v, want the connection closed as %s", err, reasonFilter)
			}
		})
	}
}
