package encryption

import "testing"

// A buffer given back is handed out again for a partition of its class,
// never for a larger one, and the idle buffers stay within
// maxIdleRecordBufBytes however many are given back.
func TestRecordBufsReuseAndBound(t *testing.T) {
	p := newRecordBufs()
	b := p.get(300 << 10)
	if cap(*b) != 512<<10 {
		t.Fatalf("a 300 KiB partition got %d bytes", cap(*b))
	}
	*b = append(*b, 1)
	p.put(b)
	if again := p.get(400 << 10); again != b || len(*again) != 0 {
		t.Errorf("a 400 KiB partition did not get the idle 512 KiB buffer back empty")
	}
	p.put(b)
	if larger := p.get(600 << 10); larger == b || cap(*larger) < 600<<10 {
		t.Errorf("a 600 KiB partition got a %d-byte buffer", cap(*larger))
	}
	for range 200 {
		p.put(p.getFresh(4 << 20))
	}
	if idle := p.idleBytes.Load(); idle > maxIdleRecordBufBytes {
		t.Errorf("%d idle bytes, bound %d", idle, maxIdleRecordBufBytes)
	}
}

// getFresh is a new buffer of size bytes, as get makes one.
func (p *recordBufs) getFresh(size int) *[]byte {
	b := make([]byte, 0, size)
	return &b
}

// No buffer is more than twice the size asked for: a message of
// thousands of small partitions must not hold a 64 KiB buffer for each.
func TestRecordBufsAtMostTwiceTheSize(t *testing.T) {
	p := newRecordBufs()
	for _, size := range []int{1, 300, 4 << 10, 32 << 10, 32<<10 + 1, 100 << 10, 8 << 20, 9 << 20} {
		b := p.get(size)
		if cap(*b) < size || cap(*b) > 2*size {
			t.Errorf("a %d-byte partition got a %d-byte buffer", size, cap(*b))
		}
		p.put(b)
	}
}
