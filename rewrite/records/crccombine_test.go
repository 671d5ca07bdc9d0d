package records

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestCRC32CCombine checks the combination against hash/crc32 on random
// inputs split at random points, the empty halves included.
func TestCRC32CCombine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, rng.IntN(5000))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		at := 0
		if len(b) > 0 {
			at = rng.IntN(len(b) + 1)
		}
		want := crc32.Checksum(b, castagnoli)
		got := crc32cCombine(crc32.Checksum(b[:at], castagnoli), crc32.Checksum(b[at:], castagnoli), int64(len(b)-at))
		if got != want {
			t.Fatalf("len %d split at %d: combined %#08x, whole %#08x", len(b), at, got, want)
		}
	}
}

// TestCRC32CCombineLong checks a length whose bits reach far beyond one
// byte's shift: a value of 1 GiB of zero bytes, whose CRC is known from
// hash/crc32 fed in chunks.
func TestCRC32CCombineLong(t *testing.T) {
	const n = 1 << 30
	zeros := make([]byte, 1<<20)
	crc := uint32(0)
	for range n / len(zeros) {
		crc = crc32.Update(crc, castagnoli, zeros)
	}
	prefix := []byte("record batch header")
	want := crc32.Update(crc32.Checksum(prefix, castagnoli), castagnoli, nil)
	for range n / len(zeros) {
		want = crc32.Update(want, castagnoli, zeros)
	}
	if got := crc32cCombine(crc32.Checksum(prefix, castagnoli), crc, n); got != want {
		t.Fatalf("combined %#08x, whole %#08x", got, want)
	}
}

func FuzzCRC32CCombine(f *testing.F) {
	f.Add([]byte("hello, world"), uint16(5))
	f.Fuzz(func(t *testing.T, b []byte, split uint16) {
		at := int(split) % (len(b) + 1)
		want := crc32.Checksum(b, castagnoli)
		if got := crc32cCombine(crc32.Checksum(b[:at], castagnoli), crc32.Checksum(b[at:], castagnoli), int64(len(b)-at)); got != want {
			t.Fatalf("split at %d: combined %#08x, whole %#08x", at, got, want)
		}
	})
}
