package wire

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAPITableMatchesKmsg checks KnownAPI, MaxVersion, SupportedVersion and
// IsFlexible against kmsg for every key and version, plus the neighbours.
func TestAPITableMatchesKmsg(t *testing.T) {
	keys := kmsgKeys(t)
	if got, want := MaxKnownKey(), keys[len(keys)-1]; got != want {
		t.Fatalf("MaxKnownKey() = %d, kmsg's highest key is %d", got, want)
	}
	for _, key := range []int16{-1, math.MinInt16, keys[len(keys)-1] + 1, math.MaxInt16} {
		if KnownAPI(key) || MaxVersion(key) != -1 || SupportedVersion(key, 0) || IsFlexible(key, 0) {
			t.Errorf("key %d: KnownAPI=%v MaxVersion=%d SupportedVersion(0)=%v IsFlexible(0)=%v, want false/-1/false/false",
				key, KnownAPI(key), MaxVersion(key), SupportedVersion(key, 0), IsFlexible(key, 0))
		}
	}
	for _, key := range keys {
		maxV := kmsgMaxVersion(key)
		if !KnownAPI(key) {
			t.Errorf("KnownAPI(%d %s) = false", key, APIName(key))
		}
		if got := MaxVersion(key); got != maxV {
			t.Errorf("MaxVersion(%d %s) = %d, kmsg says %d", key, APIName(key), got, maxV)
		}
		for _, v := range []int16{-1, maxV + 1, math.MaxInt16} {
			if SupportedVersion(key, v) {
				t.Errorf("SupportedVersion(%s, %d) = true", APIName(key), v)
			}
		}
		for v := int16(0); v <= maxV+2; v++ {
			if v <= maxV && !SupportedVersion(key, v) {
				t.Errorf("SupportedVersion(%s, %d) = false", APIName(key), v)
			}
			if got, want := IsFlexible(key, v), kmsgRequestFlexible(key, v); got != want {
				t.Errorf("IsFlexible(%s, %d) = %v, kmsg says %v", APIName(key), v, got, want)
			}
		}
		if got, want := IsFlexible(key, math.MaxInt16), kmsgRequestFlexible(key, maxV); got != want {
			t.Errorf("IsFlexible(%s, MaxInt16) = %v, want %v (as at max v%d)", APIName(key), got, want, maxV)
		}
	}
}

// TestParseRequestHeaderBoundaries builds, for every API key at the last
// non-flexible and the first flexible version, headers with a null, an empty
// and a non-empty client id (and, when flexible, with no and with two unknown
// tagged fields), followed by body bytes, and checks every parsed field.
// Every proper prefix of each header must fail with ErrShortBuffer.
func TestParseRequestHeaderBoundaries(t *testing.T) {
	clientIDs := []*string{nil, strPtr(""), strPtr("kproxy-test-client"), strPtr(strings.Repeat("c", 300))}
	twoTags := []taggedField{
		{tag: 0, data: []byte("x")},
		{tag: 300, data: bytes.Repeat([]byte{0xab}, 200)}, // two-byte tag and size varints
	}
	body := []byte{0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0}
	cases := 0
	for _, key := range kmsgKeys(t) {
		maxV := kmsgMaxVersion(key)
		versions := boundaryVersions(key)
		// Versions above kmsg's max are parsed like the max.
		versions = append(versions, maxV, maxV+1, maxV+7, math.MaxInt16)
		for _, v := range versions {
			flexible := kmsgRequestFlexible(key, v)
			tagSets := [][]taggedField{nil}
			if flexible {
				tagSets = append(tagSets, twoTags)
			}
			for _, id := range clientIDs {
				for _, tags := range tagSets {
					cases++
					corr := int32(0x01020304) ^ int32(key)<<16 ^ int32(v)
					hdr := encodeRequestHeader(key, v, corr, id, flexible, tags)
					name := fmt.Sprintf("%s/v%d/client-%s/tags%d", APIName(key), v, describeClientID(id), len(tags))
					t.Run(name, func(t *testing.T) {
						in := append(append([]byte(nil), hdr...), body...)
						h, err := ParseRequestHeader(in)
						if err != nil {
							t.Fatalf("ParseRequestHeader: %v", err)
						}
						want := RequestHeader{APIKey: key, APIVersion: v, CorrelationID: corr, Flexible: flexible, Len: len(hdr)}
						if id != nil {
							want.ClientID = *id
						}
						if h != want {
							t.Fatalf("parsed %+v\nwant   %+v", h, want)
						}
						if !bytes.Equal(in[h.Len:], body) {
							t.Fatalf("body after header = %x, want %x", in[h.Len:], body)
						}
						// The header alone parses the same.
						if h2, err := ParseRequestHeader(hdr); err != nil || h2 != want {
							t.Fatalf("header without body: %+v, %v", h2, err)
						}
						for n := 0; n < len(hdr); n++ {
							_, err := ParseRequestHeader(hdr[:n:n])
							if !errors.Is(err, ErrShortBuffer) {
								t.Fatalf("header truncated to %d of %d bytes: err = %v, want ErrShortBuffer", n, len(hdr), err)
							}
						}
					})
				}
			}
		}
	}
	if cases < 500 {
		t.Fatalf("only %d cases; the key table looks wrong", cases)
	}
}

// TestAppendRequestHeaderMatchesWire checks AppendRequestHeader against the
// hand encoder at every boundary, and that it re-parses to the same fields.
func TestAppendRequestHeaderMatchesWire(t *testing.T) {
	for _, key := range kmsgKeys(t) {
		for _, v := range boundaryVersions(key) {
			for _, id := range []string{"", "kproxy", strings.Repeat("x", 1000)} {
				flexible := kmsgRequestFlexible(key, v)
				h := RequestHeader{APIKey: key, APIVersion: v, CorrelationID: -7, ClientID: id, Flexible: flexible}
				got := AppendRequestHeader([]byte("prefix"), h)
				want := append([]byte("prefix"), encodeRequestHeader(key, v, -7, &id, flexible, nil)...)
				if !bytes.Equal(got, want) {
					t.Fatalf("%s v%d client %q:\n got %x\nwant %x", APIName(key), v, id, got, want)
				}
				back, err := ParseRequestHeader(got[len("prefix"):])
				h.Len = len(want) - len("prefix")
				if err != nil || back != h {
					t.Fatalf("%s v%d: re-parsed %+v, %v; want %+v", APIName(key), v, back, err, h)
				}
			}
		}
	}
}

func TestParseRequestHeaderErrors(t *testing.T) {
	metaFlex := int16(9) // Metadata v9 is the first flexible version
	if !kmsgRequestFlexible(MetadataKey, metaFlex) || kmsgRequestFlexible(MetadataKey, metaFlex-1) {
		t.Fatalf("Metadata v%d is not the first flexible version any more; fix the test", metaFlex)
	}
	fixed := func(key, version int16) []byte {
		return encodeRequestHeader(key, version, 1, nil, false, nil)[:RequestHeaderFixedLen]
	}
	withIDLen := func(key, version int16, idLen uint16, rest ...byte) []byte {
		b := append(fixed(key, version), byte(idLen>>8), byte(idLen))
		return append(b, rest...)
	}
	flexNull := withIDLen(MetadataKey, metaFlex, 0xffff)
	flexNull = flexNull[:len(flexNull):len(flexNull)] // appends below must copy
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"nil", nil, ErrShortBuffer},
		{"fixed part only", fixed(MetadataKey, 1), ErrShortBuffer},
		{"unknown key just above kmsg", withIDLen(MaxKnownKey()+1, 0, 0), ErrUnknownAPIKey},
		{"unknown key 1000", withIDLen(1000, 0, 0), ErrUnknownAPIKey},
		{"unknown key max int16", withIDLen(math.MaxInt16, 0, 0), ErrUnknownAPIKey},
		{"negative key", withIDLen(-1, 0, 0), ErrUnknownAPIKey},
		{"negative version -1", withIDLen(MetadataKey, -1, 0), ErrUnsupportedVersion},
		{"negative version min int16", withIDLen(APIVersionsKey, math.MinInt16, 0), ErrUnsupportedVersion},
		{"client id length -2", withIDLen(MetadataKey, 1, 0xfffe), ErrMalformed},
		{"client id length min int16", withIDLen(MetadataKey, 1, 0x8000), ErrMalformed},
		{"flexible client id length -2", withIDLen(MetadataKey, metaFlex, 0xfffe, 0), ErrMalformed},
		{"client id longer than buffer", withIDLen(MetadataKey, 1, 5, 'a', 'b'), ErrShortBuffer},
		{"client id length max int16", withIDLen(MetadataKey, 1, 0x7fff, 'a'), ErrShortBuffer},
		{"flexible without tag section", flexNull, ErrShortBuffer},
		{"tag count varint with 5 continuation bytes", append(flexNull, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00), ErrMalformed},
		{"tag count varint with 6 continuation bytes", append(flexNull, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00), ErrMalformed},
		{"tag count varint cut short", append(flexNull, 0x80, 0x80), ErrShortBuffer},
		{"tag id varint with 6 continuation bytes", append(flexNull, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0), ErrMalformed},
		{"tag size varint with 6 continuation bytes", append(flexNull, 1, 5, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00), ErrMalformed},
		{"tag size beyond buffer", append(flexNull, 1, 5, 3, 'a', 'b'), ErrShortBuffer},
		{"tag size max varint", append(flexNull, 1, 5, 0xff, 0xff, 0xff, 0xff, 0x0f), ErrShortBuffer},
		{"huge tag count", append(flexNull, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0), ErrShortBuffer},
		{"second tag missing", append(flexNull, 2, 0, 1, 'a'), ErrShortBuffer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := ParseRequestHeader(c.in)
			if !errors.Is(err, c.want) {
				t.Fatalf("ParseRequestHeader(%x) = %+v, %v; want error %v", c.in, h, err, c.want)
			}
		})
	}
}

// TestParseRequestHeaderNonCanonicalTagCount: a zero tag count written as a
// two-byte varint is valid and occupies two bytes.
func TestParseRequestHeaderNonCanonicalTagCount(t *testing.T) {
	in := append(encodeRequestHeader(APIVersionsKey, 3, 9, strPtr("id"), false, nil), 0x80, 0x00, 0xff)
	h, err := ParseRequestHeader(in)
	if err != nil {
		t.Fatal(err)
	}
	if h.Len != len(in)-1 || h.ClientID != "id" || !h.Flexible {
		t.Fatalf("got %+v, want Len %d", h, len(in)-1)
	}
}

// TestResponseHeaderBoundaries covers ResponseHeaderFlexible,
// AppendResponseHeader and SkipResponseHeader for every key at both
// boundaries, with 0 and 2 tagged fields on flexible headers.
func TestResponseHeaderBoundaries(t *testing.T) {
	body := []byte{0, 0, 0xca, 0xfe}
	for _, key := range kmsgKeys(t) {
		maxV := kmsgMaxVersion(key)
		for _, v := range append(boundaryVersions(key), maxV, maxV+1) {
			// KIP-511: the ApiVersions response header is always v0.
			wantFlex := key != APIVersionsKey && kmsgResponseFlexible(key, v)
			t.Run(fmt.Sprintf("%s/v%d", APIName(key), v), func(t *testing.T) {
				if got := ResponseHeaderFlexible(key, v); got != wantFlex {
					t.Fatalf("ResponseHeaderFlexible = %v, want %v", got, wantFlex)
				}
				const corr = int32(-123456)
				wantHdr := []byte{0xff, 0xfe, 0x1d, 0xc0}
				if wantFlex {
					wantHdr = append(wantHdr, 0)
				}
				got := AppendResponseHeader([]byte{9}, key, v, corr)
				if !bytes.Equal(got, append([]byte{9}, wantHdr...)) {
					t.Fatalf("AppendResponseHeader = %x, want 09%x", got, wantHdr)
				}
				headers := [][]byte{wantHdr}
				if wantFlex {
					headers = append(headers, appendTags([]byte{0xff, 0xfe, 0x1d, 0xc0}, []taggedField{
						{tag: 1, data: []byte("ab")}, {tag: 200, data: make([]byte, 130)},
					}))
				}
				for _, hdr := range headers {
					frame := append(append([]byte(nil), hdr...), body...)
					if c, err := ResponseCorrelationID(frame); err != nil || c != corr {
						t.Fatalf("ResponseCorrelationID = %d, %v", c, err)
					}
					got, err := SkipResponseHeader(key, v, frame)
					if err != nil {
						t.Fatalf("SkipResponseHeader(%x): %v", frame, err)
					}
					if !bytes.Equal(got, body) {
						t.Fatalf("SkipResponseHeader body = %x, want %x", got, body)
					}
					for n := 0; n < len(hdr); n++ {
						if _, err := SkipResponseHeader(key, v, hdr[:n:n]); !errors.Is(err, ErrShortBuffer) {
							t.Fatalf("header truncated to %d of %d: err = %v, want ErrShortBuffer", n, len(hdr), err)
						}
					}
				}
			})
		}
	}
}

// TestAPIVersionsResponseHeaderIsV0 pins KIP-511: ApiVersions v3 and v4 are
// flexible requests with flexible bodies but the v0 response header, and a
// real kmsg-encoded response reads back through SkipResponseHeader and
// DecodeResponse.
func TestAPIVersionsResponseHeaderIsV0(t *testing.T) {
	for _, v := range []int16{3, 4} {
		if !IsFlexible(APIVersionsKey, v) || !kmsgResponseFlexible(APIVersionsKey, v) {
			t.Fatalf("ApiVersions v%d must be flexible", v)
		}
		if ResponseHeaderFlexible(APIVersionsKey, v) {
			t.Fatalf("ResponseHeaderFlexible(ApiVersions, %d) = true, want false", v)
		}
		if got := AppendResponseHeader(nil, APIVersionsKey, v, 77); !bytes.Equal(got, []byte{0, 0, 0, 77}) {
			t.Fatalf("ApiVersions v%d response header = %x, want 0000004d", v, got)
		}
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.SetVersion(v)
		resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 0, MinVersion: 3, MaxVersion: 11}, {ApiKey: 18, MaxVersion: 4}}
		resp.ThrottleMillis = 5
		body := resp.AppendTo(nil)
		// The body starts with the error code right after the correlation
		// id: no tag byte in between.
		frame := append([]byte{0, 0, 0, 77}, body...)
		got, err := SkipResponseHeader(APIVersionsKey, v, frame)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("SkipResponseHeader = %x, %v; want %x", got, err, body)
		}
		dec, err := DecodeResponse(APIVersionsKey, v, got)
		if err != nil {
			t.Fatal(err)
		}
		if dec.GetVersion() != v || len(dec.(*kmsg.ApiVersionsResponse).ApiKeys) != 2 {
			t.Fatalf("decoded %+v", dec)
		}
		out := AppendResponseFrame(nil, 77, dec)
		if !bytes.Equal(out[FrameSizeLen:], frame) {
			t.Fatalf("AppendResponseFrame = %x, want size + %x", out, frame)
		}
	}
}
