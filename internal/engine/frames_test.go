package engine

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/iotest"
)

func TestReadFrameReadsExactlyOneFrame(t *testing.T) {
	frame := bytes.Repeat([]byte{0xAB}, 200<<10) // spans growth past eagerFrameAlloc
	stream := append(append([]byte(nil), frame...), "next"...)
	// One byte at a time at first, then whatever the reader gives.
	cr := bufio.NewReaderSize(iotest.HalfReader(bytes.NewReader(stream)), 16<<10)
	got, err := readFrame(nil, cr, len(frame))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, frame) {
		t.Fatalf("read %d bytes, not the frame", len(got))
	}
	rest, _ := io.ReadAll(cr)
	if string(rest) != "next" {
		t.Errorf("left %q after the frame, want %q", rest, "next")
	}
}

func TestReadFrameReusesRoom(t *testing.T) {
	dst := make([]byte, 0, 1<<20)
	cr := bufio.NewReader(bytes.NewReader(make([]byte, 300<<10)))
	got, err := readFrame(dst, cr, 300<<10)
	if err != nil {
		t.Fatal(err)
	}
	if &got[0] != &dst[:1][0] {
		t.Error("a buffer with room for the frame was not reused")
	}
}

func TestReadFrameGrowsOnlyWithArrivingBytes(t *testing.T) {
	const claimed = 512 << 20 // what a hostile size prefix says
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readFrame(nil, bufio.NewReader(bytes.NewReader(make([]byte, 100))), claimed)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short frame: %v, want unexpected EOF", err)
	}
	// Far below the claim, with room for whatever other goroutines of the
	// test binary allocate meanwhile.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Errorf("allocated %d bytes for a %d-byte frame of which 100 bytes arrived", grew, claimed)
	}
}

func TestFramePoolDropsHugeBuffers(t *testing.T) {
	var fp framePool
	big := make([]byte, maxPooledFrame+1)
	fp.put(&big)
	fp.put(nil) // a frame that was not pooled
	if b := fp.get(maxPooledFrame); cap(*b) > maxPooledFrame {
		t.Errorf("pool handed back a %d-byte buffer, over the %d cap", cap(*b), maxPooledFrame)
	}
}

func TestReadFrameRoomFitsTheNextLargerFrame(t *testing.T) {
	// A producer's requests vary in size from one to the next: the buffer
	// grown for one must hold a slightly larger one without being replaced.
	first, second := 5<<20-100<<10, 5<<20-10<<10
	cr := bufio.NewReader(bytes.NewReader(make([]byte, first+second)))
	buf, err := readFrame(nil, cr, first)
	if err != nil {
		t.Fatal(err)
	}
	again, err := readFrame(buf[:0], cr, second)
	if err != nil {
		t.Fatal(err)
	}
	if &again[0] != &buf[0] {
		t.Errorf("a %d-byte frame did not fit the buffer (cap %d) grown for a %d-byte one", second, cap(buf), first)
	}
	if room := frameRoom(maxPooledFrame + 1); room != maxPooledFrame+1 {
		t.Errorf("an unpooled frame got room %d, want its size", room)
	}
}

func TestFramePoolGivesTheSmallestBufferThatHolds(t *testing.T) {
	var fp framePool
	for _, c := range []int{1 << 20, 100 << 10, 6 << 20, 3 << 20} {
		b := make([]byte, 0, c)
		fp.put(&b)
	}
	for _, tc := range []struct{ frame, want int }{{5 << 20, 6 << 20}, {2 << 20, 3 << 20}, {50 << 10, 100 << 10}, {7 << 20, 0}, {1, 1 << 20}} {
		if b := fp.get(tc.frame); cap(*b) != tc.want {
			t.Errorf("a %d-byte frame got a %d-byte buffer, want %d", tc.frame, cap(*b), tc.want)
		}
	}
	// Idle buffers are bounded.
	for i := 0; i < 2*maxIdleFrameBytes/maxPooledFrame; i++ {
		b := make([]byte, 0, maxPooledFrame)
		fp.put(&b)
	}
	if fp.bytes > maxIdleFrameBytes {
		t.Errorf("%d bytes of idle buffers kept, over %d", fp.bytes, maxIdleFrameBytes)
	}
	// Many small idle buffers (many connections reading small frames at
	// once) are bounded in number, and larger ones displace them.
	var many framePool
	for i := 0; i < 10*maxIdleFrames; i++ {
		b := make([]byte, 0, 100+i)
		many.put(&b)
	}
	if len(many.idle) > maxIdleFrames {
		t.Errorf("%d idle buffers kept, over %d", len(many.idle), maxIdleFrames)
	}
	if b := many.get(1); cap(*b) < 100+9*maxIdleFrames {
		t.Errorf("the smallest kept buffer is %d bytes: smaller ones were not displaced", cap(*b))
	}
}
