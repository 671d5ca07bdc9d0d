package largemessage

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"testing"

	"github.com/kproxy/kproxy/internal/largemessage/pointer"
)

// TestVerifyingReaderCatchesAChangedObject: the second read of a streamed
// value passes every byte on and, at its end, fails on an object that is
// not the one the first read checked (another byte, shorter, longer), so
// that the engine closes the client's connection instead of completing a
// wrong value.
func TestVerifyingReaderCatchesAChangedObject(t *testing.T) {
	value := bytes.Repeat([]byte("large message "), 100_000)
	p := pointer.Pointer{Bucket: "b", Key: "default/t/lfs/x", Size: int64(len(value)), SHA256: fmt.Sprintf("%x", sha256.Sum256(value))}
	crc := crc32.Checksum(value, castagnoli)
	changed := bytes.Clone(value)
	changed[len(changed)/2] ^= 1
	for name, tc := range map[string]struct {
		object   []byte
		wantCRC  uint32
		mismatch bool
	}{
		"the value":              {value, crc, false},
		"a byte changed":         {changed, crc, true},
		"shorter":                {value[:len(value)-1], crc, true},
		"longer":                 {append(bytes.Clone(value), 'x'), crc, true},
		"another first-read CRC": {value, crc + 1, true},
	} {
		t.Run(name, func(t *testing.T) {
			reported := 0
			v, err := newVerifying(io.NopCloser(bytes.NewReader(tc.object)), p, tc.wantCRC, true)
			if err != nil {
				t.Fatal(err)
			}
			v.onMismatch = func(error) { reported++ }
			got, err := io.ReadAll(v)
			if !bytes.Equal(got, tc.object) {
				t.Errorf("passed %d bytes on, want the object's %d", len(got), len(tc.object))
			}
			if tc.mismatch != errors.Is(err, errMismatch) || (!tc.mismatch && err != nil) {
				t.Errorf("read error %v, want a mismatch: %v", err, tc.mismatch)
			}
			if _, again := v.Read(make([]byte, 1)); tc.mismatch && !errors.Is(again, errMismatch) {
				t.Errorf("a read after the mismatch: %v, want the mismatch again", again)
			}
			if tc.mismatch != (reported == 1) {
				t.Errorf("mismatch reported %d times (a read after it must not report it again)", reported)
			}
		})
	}
}
