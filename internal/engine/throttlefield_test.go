package engine

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// fetchFrame is a Fetch response frame of version with the broker's
// throttle_time_ms and one topic with records.
func fetchFrame(version int16, brokerThrottle int32) []byte {
	return protocol.AppendResponseFrame(nil, 42, fetchResponse(version, brokerThrottle, bytes.Repeat([]byte{7}, 100)))
}

// relayed is what a direction over frame relays once setFetchThrottle ran.
func relayed(t *testing.T, frame []byte, version int16, throttle time.Duration) (bool, []byte) {
	t.Helper()
	d := &direction{r: bufio.NewReaderSize(bytes.NewReader(frame), 64)}
	ok := setFetchThrottle(d, version, len(frame), throttle)
	out, err := io.ReadAll(d.r)
	if err != nil {
		t.Fatal(err)
	}
	return ok, out
}

// TestSetFetchThrottleInPlace: throttle_time_ms of a Fetch response is
// set in the read buffer, to the larger of kproxy's and the broker's,
// without changing any other byte, in flexible and older versions.
func TestSetFetchThrottleInPlace(t *testing.T) {
	for _, version := range []int16{1, 4, 11, 12, 16} {
		for _, c := range []struct {
			broker int32
			ours   time.Duration
			want   int32
		}{{0, 250 * time.Millisecond, 250}, {900, 250 * time.Millisecond, 900}} {
			frame := fetchFrame(version, c.broker)
			ok, out := relayed(t, frame, version, c.ours)
			if !ok {
				t.Fatalf("v%d: not set in place", version)
			}
			body, err := wire.SkipResponseHeader(wire.FetchKey, version, out[protocol.FrameSizeLen:])
			if err != nil {
				t.Fatal(err)
			}
			resp := kmsg.NewPtrFetchResponse()
			resp.SetVersion(version)
			if err := resp.ReadFrom(body); err != nil {
				t.Fatalf("v%d: the relayed frame does not decode: %v", version, err)
			}
			if resp.ThrottleMillis != c.want {
				t.Errorf("v%d broker %d, kproxy %v: throttle_time_ms %d, want %d", version, c.broker, c.ours, resp.ThrottleMillis, c.want)
			}
			want := fetchFrame(version, c.want)
			if !bytes.Equal(out, want) {
				t.Errorf("v%d: bytes other than throttle_time_ms changed", version)
			}
		}
	}
}

// TestSetFetchThrottleDeclines: a frame too short for the field, or a
// flexible header carrying tagged fields, is left alone for the decoding
// path.
func TestSetFetchThrottleDeclines(t *testing.T) {
	short := []byte{0, 0, 0, 6, 0, 0, 0, 42, 0, 0}
	if ok, out := relayed(t, short, 4, time.Second); ok || !bytes.Equal(out, short) {
		t.Errorf("short frame: set %v, relayed %v", ok, out)
	}
	tagged := fetchFrame(12, 0)
	tagged[protocol.FrameSizeLen+4] = 1 // one tagged field in the header
	if ok, out := relayed(t, tagged, 12, time.Second); ok || !bytes.Equal(out, tagged) {
		t.Errorf("header with tags: set %v", ok)
	}
}

// FuzzSetFetchThrottle: on any frame, setFetchThrottle either declines
// and changes nothing, or changes only the four bytes of the field, to
// at least what they held.
func FuzzSetFetchThrottle(f *testing.F) {
	for _, v := range []int16{0, 1, 7, 12, 16} {
		f.Add(fetchFrame(max(v, 1), 3), v, int64(time.Second))
	}
	f.Add([]byte{0, 0, 0, 1, 0}, int16(12), int64(1))
	f.Fuzz(func(t *testing.T, frame []byte, version int16, throttle int64) {
		if version < 0 || version > protocol.MaxVersion(wire.FetchKey) || throttle < 0 {
			return
		}
		d := &direction{r: bufio.NewReaderSize(bytes.NewReader(frame), 64)}
		ok := setFetchThrottle(d, version, len(frame), time.Duration(throttle))
		out, _ := io.ReadAll(d.r)
		if len(out) != len(frame) {
			t.Fatalf("relayed %d bytes of %d", len(out), len(frame))
		}
		diff := -1
		for i := range out {
			if out[i] != frame[i] {
				if diff < 0 {
					diff = i
				}
				if i >= diff+4 {
					t.Fatalf("bytes changed beyond one field: %d and %d", diff, i)
				}
			}
		}
		if diff >= 0 && !ok {
			t.Fatal("declined yet changed the frame")
		}
		if diff >= 0 {
			start := protocol.FrameSizeLen + 4 // the field, after the header
			if wire.ResponseHeaderFlexible(wire.FetchKey, version) {
				start++
			}
			before, after := int32(binary.BigEndian.Uint32(frame[start:])), int32(binary.BigEndian.Uint32(out[start:]))
			if after < before {
				t.Fatalf("throttle_time_ms lowered from %d to %d", before, after)
			}
		}
	})
}
