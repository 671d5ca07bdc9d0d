package wire

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

func TestParseFrameSize(t *testing.T) {
	const max = DefaultMaxFrameSize
	prefix := func(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }
	neg := func(n int32) uint32 { return uint32(n) }
	cases := []struct {
		name   string
		prefix []byte
		max    int32
		want   int32
		err    error
	}{
		{"empty", nil, max, 0, ErrShortBuffer},
		{"3 bytes", []byte{0, 0, 0}, max, 0, ErrShortBuffer},
		{"negative -1", prefix(neg(-1)), max, 0, ErrFrameTooSmall},
		{"negative min int32", prefix(neg(math.MinInt32)), max, 0, ErrFrameTooSmall},
		{"negative with max int32 limit", prefix(neg(-4)), math.MaxInt32, 0, ErrFrameTooSmall},
		{"0", prefix(0), max, 0, ErrFrameTooSmall},
		{"3", prefix(3), max, 0, ErrFrameTooSmall},
		{"4 (smallest response)", prefix(4), max, 4, nil},
		{"max", prefix(max), max, max, nil},
		{"max+1", prefix(max + 1), max, 0, ErrFrameTooLarge},
		{"2 GiB-1 over default max", prefix(math.MaxInt32), max, 0, ErrFrameTooLarge},
		{"2 GiB-1 with max int32 limit", prefix(math.MaxInt32), math.MaxInt32, math.MaxInt32, nil},
		{"small limit", prefix(101), 100, 0, ErrFrameTooLarge},
		{"longer prefix reads first 4", append(prefix(10), 0xff, 0xff), max, 10, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseFrameSize(c.prefix, c.max)
			if c.err != nil {
				if !errors.Is(err, c.err) || got != 0 {
					t.Fatalf("ParseFrameSize = %d, %v; want error %v", got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ParseFrameSize = %d, %v; want %d", got, err, c.want)
			}
		})
	}
}

func TestAppendFrameSize(t *testing.T) {
	for _, n := range []int{4, 1000, DefaultMaxFrameSize, math.MaxInt32} {
		b := AppendFrameSize([]byte{7}, n)
		if len(b) != 1+FrameSizeLen || b[0] != 7 {
			t.Fatalf("AppendFrameSize(%d) = %x", n, b)
		}
		if got, err := ParseFrameSize(b[1:], math.MaxInt32); err != nil || int(got) != n {
			t.Fatalf("round trip of %d: %d, %v", n, got, err)
		}
	}
}
