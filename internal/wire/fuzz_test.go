package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// knownError reports whether err wraps one of the package's sentinel
// errors: every failure must be classifiable by the caller.
func knownError(err error) bool {
	for _, e := range []error{ErrShortBuffer, ErrMalformed, ErrUnknownAPIKey, ErrUnsupportedVersion, ErrFrameTooSmall, ErrFrameTooLarge} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// FuzzParseRequestHeader: ParseRequestHeader never panics, fails only with
// a sentinel error, and a parsed header is consistent with its input:
// Len within the input, the client id taken from the input, Flexible as
// IsFlexible says, and re-encoding with AppendRequestHeader parses back to
// the same fields (byte for byte when the input had a non-null client id and
// a canonical empty tag section).
func FuzzParseRequestHeader(f *testing.F) {
	for _, key := range []int16{ProduceKey, MetadataKey, APIVersionsKey, SASLHandshakeKey, DescribeClusterKey} {
		for _, v := range append(boundaryVersions(key), kmsgMaxVersion(key)+1) {
			flex := kmsgRequestFlexible(key, v)
			f.Add(encodeRequestHeader(key, v, 1, strPtr("client"), flex, nil))
			f.Add(encodeRequestHeader(key, v, 2, nil, flex, []taggedField{{tag: 1, data: []byte("ab")}}))
		}
	}
	f.Add([]byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xfe, 0})
	f.Add([]byte{0, 3, 0, 12, 0, 0, 0, 1, 0xff, 0xff, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseRequestHeader(data)
		if err != nil {
			if !knownError(err) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if h.Len < RequestHeaderFixedLen+2 || h.Len > len(data) {
			t.Fatalf("Len %d outside [%d, %d]", h.Len, RequestHeaderFixedLen+2, len(data))
		}
		if !KnownAPI(h.APIKey) || h.APIVersion < 0 {
			t.Fatalf("accepted key %d version %d", h.APIKey, h.APIVersion)
		}
		if h.Flexible != IsFlexible(h.APIKey, h.APIVersion) || h.Flexible != kmsgRequestFlexible(h.APIKey, h.APIVersion) {
			t.Fatalf("Flexible = %v for %s v%d", h.Flexible, APIName(h.APIKey), h.APIVersion)
		}
		if h.APIKey != int16(binary.BigEndian.Uint16(data)) || h.APIVersion != int16(binary.BigEndian.Uint16(data[2:])) ||
			h.CorrelationID != int32(binary.BigEndian.Uint32(data[4:])) {
			t.Fatalf("fixed fields %+v do not match input %x", h, data[:8])
		}
		idLen := int(int16(binary.BigEndian.Uint16(data[8:])))
		nullID := idLen == -1
		if nullID {
			if h.ClientID != "" {
				t.Fatalf("null client id parsed as %q", h.ClientID)
			}
		} else if idLen != len(h.ClientID) || string(data[10:10+idLen]) != h.ClientID {
			t.Fatalf("client id %q does not match input", h.ClientID)
		}
		idEnd := 10 + len(h.ClientID)
		switch {
		case !h.Flexible && h.Len != idEnd:
			t.Fatalf("non-flexible header Len %d, want %d", h.Len, idEnd)
		case h.Flexible && h.Len <= idEnd:
			t.Fatalf("flexible header Len %d has no tag section after %d", h.Len, idEnd)
		}

		enc := AppendRequestHeader(nil, h)
		back, err := ParseRequestHeader(enc)
		if err != nil {
			t.Fatalf("re-encoded header %x does not parse: %v", enc, err)
		}
		want := h
		want.Len = len(enc)
		if back != want {
			t.Fatalf("re-parsed %+v, want %+v", back, want)
		}
		canonical := !h.Flexible || (h.Len == idEnd+1 && data[idEnd] == 0)
		if !nullID && canonical && !bytes.Equal(enc, data[:h.Len]) {
			t.Fatalf("re-encoded %x, input header %x", enc, data[:h.Len])
		}
	})
}

// FuzzSkipResponseHeader: SkipResponseHeader never panics, and what it
// returns is a suffix of the input after at least the correlation id (after
// exactly the correlation id for non-flexible headers and ApiVersions);
// AppendResponseHeader plus that body skips back to the same body.
func FuzzSkipResponseHeader(f *testing.F) {
	f.Add(MetadataKey, int16(9), []byte{0, 0, 0, 1, 0, 0, 0, 0, 5})
	f.Add(MetadataKey, int16(8), []byte{0, 0, 0, 1, 0, 0, 0, 0, 5})
	f.Add(APIVersionsKey, int16(3), append([]byte{0, 0, 0, 9}, apiVersionsBody(0, ErrCodeUnsupportedVersion)...))
	f.Add(ProduceKey, int16(9), appendTags([]byte{0, 0, 0, 2}, []taggedField{{tag: 0, data: []byte("x")}, {tag: 9}}))
	f.Add(FetchKey, int16(12), []byte{0, 0, 0, 2, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80})
	f.Fuzz(func(t *testing.T, key, version int16, data []byte) {
		body, err := SkipResponseHeader(key, version, data)
		if err != nil {
			if !knownError(err) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			if len(data) >= 4 && !ResponseHeaderFlexible(key, version) {
				t.Fatalf("non-flexible header of %d bytes failed: %v", len(data), err)
			}
			return
		}
		if len(body) > len(data)-4 || !bytes.Equal(body, data[len(data)-len(body):]) {
			t.Fatalf("body %x is not a suffix of %x after the correlation id", body, data)
		}
		hdrLen := len(data) - len(body)
		flex := ResponseHeaderFlexible(key, version)
		if key == APIVersionsKey && flex {
			t.Fatal("ApiVersions response header reported flexible")
		}
		if flex != (key != APIVersionsKey && KnownAPI(key) && version >= 0 && kmsgResponseFlexible(key, version)) {
			t.Fatalf("ResponseHeaderFlexible(%d, %d) = %v disagrees with kmsg", key, version, flex)
		}
		switch {
		case !flex && hdrLen != 4:
			t.Fatalf("non-flexible header took %d bytes", hdrLen)
		case flex && hdrLen < 5:
			t.Fatalf("flexible header took %d bytes", hdrLen)
		}
		corr, err := ResponseCorrelationID(data)
		if err != nil || corr != int32(binary.BigEndian.Uint32(data)) {
			t.Fatalf("ResponseCorrelationID = %d, %v", corr, err)
		}
		enc := append(AppendResponseHeader(nil, key, version, corr), body...)
		again, err := SkipResponseHeader(key, version, enc)
		if err != nil || !bytes.Equal(again, body) {
			t.Fatalf("re-encoded frame skips to %x, %v; want %x", again, err, body)
		}
		if c, _ := ResponseCorrelationID(enc); c != corr {
			t.Fatalf("re-encoded correlation id %d, want %d", c, corr)
		}
	})
}

// FuzzProduceAcks: ProduceAcks never panics, fails only with a sentinel
// error, and whenever kmsg decodes the body as a Produce request of that
// version, ProduceAcks succeeds and agrees with kmsg's Acks.
func FuzzProduceAcks(f *testing.F) {
	for _, v := range []int16{0, 2, 3, 8, 9, kmsgMaxVersion(ProduceKey)} {
		f.Add(v, produceBody(v, strPtr("txn"), -1))
		f.Add(v, produceBody(v, nil, 0))
	}
	f.Add(int16(9), []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 0, 1})
	f.Add(int16(3), []byte{0xff, 0xfe, 0, 1})
	f.Fuzz(func(t *testing.T, version int16, data []byte) {
		acks, err := ProduceAcks(version, data)
		if err != nil && !knownError(err) {
			t.Fatalf("error %v wraps no sentinel", err)
		}
		if err == nil && len(data) < 2 {
			t.Fatalf("acks %d read from %d bytes", acks, len(data))
		}
		if version < 0 || version > kmsgMaxVersion(ProduceKey) {
			return
		}
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(version)
		if req.ReadFrom(data) != nil {
			return
		}
		if err != nil || acks != req.Acks {
			t.Fatalf("kmsg decodes acks %d; ProduceAcks = %d, %v", req.Acks, acks, err)
		}
	})
}

// FuzzParseFrameSize: ParseFrameSize never panics, and accepts exactly the
// sizes in [4, max] read big-endian from the first four bytes.
func FuzzParseFrameSize(f *testing.F) {
	f.Add([]byte{0, 0, 0, 4}, int32(DefaultMaxFrameSize))
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff}, int32(0x7fffffff))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, int32(DefaultMaxFrameSize))
	f.Add([]byte{0, 0, 3}, int32(0))
	f.Fuzz(func(t *testing.T, prefix []byte, max int32) {
		size, err := ParseFrameSize(prefix, max)
		if len(prefix) < FrameSizeLen {
			if !errors.Is(err, ErrShortBuffer) {
				t.Fatalf("%d-byte prefix: %d, %v", len(prefix), size, err)
			}
			return
		}
		want := int32(binary.BigEndian.Uint32(prefix))
		switch {
		case want < 4:
			if !errors.Is(err, ErrFrameTooSmall) {
				t.Fatalf("size %d: %d, %v; want ErrFrameTooSmall", want, size, err)
			}
		case want > max:
			if !errors.Is(err, ErrFrameTooLarge) {
				t.Fatalf("size %d > max %d: %d, %v; want ErrFrameTooLarge", want, max, size, err)
			}
		default:
			if err != nil || size != want {
				t.Fatalf("size %d max %d: %d, %v", want, max, size, err)
			}
		}
		if err != nil && size != 0 {
			t.Fatalf("error %v with size %d", err, size)
		}
	})
}
