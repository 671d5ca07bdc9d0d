package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/wire"
)

// responseHeader encodes the header of a response to version of key with
// correlation id 7 and, for flexible versions, tags as its tag section
// (which must be a well-formed one; a single 0 is the empty section).
func responseHeader(key, version int16, tags []byte) []byte {
	h := binary.BigEndian.AppendUint32(nil, 7)
	if key != int16(kmsg.ApiVersions) && IsFlexible(key, version) {
		h = append(h, tags...)
	}
	return h
}

// FuzzSkipResponseHeader: SkipResponseHeader never panics, returns a
// suffix of its input, and agrees with kmsg: whenever kmsg decodes body as
// a response of key at version, the frame made of a header and body skips
// to exactly body.
func FuzzSkipResponseHeader(f *testing.F) {
	hb := kmsg.NewPtrHeartbeatResponse()
	hb.SetVersion(4)
	f.Add(int16(kmsg.Heartbeat), int16(4), []byte{0}, hb.AppendTo(nil))
	f.Add(int16(kmsg.Heartbeat), int16(4), []byte{1, 3, 2, 'h', 'i'}, hb.AppendTo(nil))
	md := kmsg.NewPtrMetadataResponse()
	md.SetVersion(8)
	f.Add(int16(kmsg.Metadata), int16(8), []byte{}, md.AppendTo(nil))
	av := kmsg.NewPtrApiVersionsResponse()
	av.SetVersion(3)
	f.Add(int16(kmsg.ApiVersions), int16(3), []byte{0}, av.AppendTo(nil))
	f.Add(int16(kmsg.Fetch), int16(12), []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80}, []byte{})
	f.Fuzz(func(t *testing.T, key, version int16, tags, body []byte) {
		raw := append(binary.BigEndian.AppendUint32(nil, 7), append(tags, body...)...)
		if got, ok := SkipResponseHeader(key, version, raw); ok && !bytes.HasSuffix(raw, got) {
			t.Fatalf("body %x is not a suffix of %x", got, raw)
		}
		if _, ok := SkipResponseHeader(key, version, raw[:min(3, len(raw))]); ok {
			t.Fatal("a header shorter than a correlation id skipped")
		}
		if !KnownAPI(key) || version < 0 || version > MaxVersion(key) {
			return
		}
		resp := kmsg.ResponseForKey(key)
		resp.SetVersion(version)
		if resp.ReadFrom(body) != nil {
			return
		}
		tagSection := []byte{0}
		if wellFormedTags(tags) {
			tagSection = tags
		}
		frame := append(responseHeader(key, version, tagSection), body...)
		got, ok := SkipResponseHeader(key, version, frame)
		if !ok || !bytes.Equal(got, body) {
			t.Fatalf("%s v%d: SkipResponseHeader = %x, %v; want kmsg's body %x", APIName(key), version, got, ok, body)
		}
	})
}

// wellFormedTags reports whether b is exactly one tag section whose
// varints are each at most 5 bytes long: Kafka's ByteUtils and franz-go's
// kbin refuse a longer unsigned varint, where encoding/binary reads up to 10.
func wellFormedTags(b []byte) bool {
	n, k := kafkaUvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return false
	}
	b = b[k:]
	for ; n > 0; n-- {
		if _, k = kafkaUvarint(b); k <= 0 {
			return false
		}
		b = b[k:]
		size, k := kafkaUvarint(b)
		if k <= 0 || size > uint64(len(b)-k) {
			return false
		}
		b = b[k+int(size):]
	}
	return len(b) == 0
}

// kafkaUvarint is binary.Uvarint refusing (k = 0) a varint of over 5 bytes.
func kafkaUvarint(b []byte) (uint64, int) {
	v, k := binary.Uvarint(b)
	if k > 5 {
		return 0, 0
	}
	return v, k
}

// FuzzRequestFrame: whenever kmsg decodes body as a request of key at
// version, the frame AppendRequestFrame makes of it reads back through
// ParseFrameSize, PeekRequestHeader and DecodeRequest to the same header
// and the same encoding; and none of them panics on the raw bytes.
func FuzzRequestFrame(f *testing.F) {
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.SetVersion(4)
	hb.Group, hb.MemberID = "group", "member"
	f.Add(int16(kmsg.Heartbeat), int16(4), hb.AppendTo(nil))
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(12)
	f.Add(int16(kmsg.Metadata), int16(12), md.AppendTo(nil))
	f.Add(int16(kmsg.Produce), int16(3), []byte{0xff, 0xff, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, key, version int16, body []byte) {
		raw := append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
		_, _ = ParseFrameSize(raw, 1<<20)
		if h, _, err := PeekRequestHeader(body); err == nil {
			_, _ = DecodeRequest(h.APIKey, h.APIVersion, body[h.Len:])
		}
		_, _ = DecodeRequest(key, version, body)

		if !KnownAPI(key) || version < 0 || version > MaxVersion(key) {
			return
		}
		want := kmsg.RequestForKey(key)
		want.SetVersion(version)
		if want.ReadFrom(body) != nil {
			return
		}
		id := "client"
		frame := AppendRequestFrame(nil, RequestHeader{CorrelationID: 9, ClientID: id}, want)
		size, err := ParseFrameSize(frame, int32(len(frame)))
		if err != nil || int(size) != len(frame)-FrameSizeLen {
			t.Fatalf("ParseFrameSize = %d, %v; the frame has %d bytes after its size", size, err, len(frame)-FrameSizeLen)
		}
		h, clientID, err := PeekRequestHeader(frame[FrameSizeLen:])
		if err != nil || h.APIKey != key || h.APIVersion != version || h.CorrelationID != 9 || string(clientID) != id {
			t.Fatalf("PeekRequestHeader = %+v, %q, %v; want %s v%d, correlation id 9, client %q", h, clientID, err, APIName(key), version, id)
		}
		got, err := DecodeRequest(key, version, frame[FrameSizeLen+h.Len:])
		if err != nil {
			if errorsIsDecodeBound(err) {
				return // kmsg took it, the memory bound did not: a hostile count
			}
			t.Fatalf("DecodeRequest of a frame kmsg encoded: %v", err)
		}
		if !bytes.Equal(got.AppendTo(nil), want.AppendTo(nil)) {
			t.Fatalf("%s v%d decoded to another request", APIName(key), version)
		}
	})
}

// errorsIsDecodeBound reports whether err is DecodeRequest refusing a body
// for the memory its decoding would take.
func errorsIsDecodeBound(err error) bool { return errors.Is(err, wire.ErrDecodeTooLarge) }
