package rewrite

import (
	"errors"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// errFuzzMapper is what fuzzMapper returns for fuzzFailNode, so the fuzzer
// also walks the error path.
var errFuzzMapper = errors.New("fuzz: no listener")

const fuzzFailNode = 666

// fuzzMapper is constMapper, except that it fails for fuzzFailNode.
type fuzzMapper struct{}

func (fuzzMapper) MapBroker(nodeID int32, host string, port int32) (string, int32, error) {
	if nodeID == fuzzFailNode {
		return "", 0, errFuzzMapper
	}
	return constMapper{}.MapBroker(nodeID, host, port)
}

// pickKey maps any int16 onto one of keys: itself if listed, otherwise an
// index into the list, so no fuzz input is wasted on an unrelated key.
func pickKey(key int16, keys []int16) int16 {
	if slices.Contains(keys, key) {
		return key
	}
	return keys[int(uint16(key))%len(keys)]
}

// pickVersion maps any int16 onto 0..maxV the same way.
func pickVersion(v, maxV int16) int16 {
	if v >= 0 && v <= maxV {
		return v
	}
	return int16(int(uint16(v)) % (int(maxV) + 1))
}

// decodeAs decodes data as the response for key at version v, or returns
// nil if kmsg rejects the bytes.
func decodeAs(key, v int16, data []byte) kmsg.Response {
	resp := kmsg.ResponseForKey(key)
	resp.SetVersion(v)
	if err := resp.ReadFrom(data); err != nil {
		return nil
	}
	return resp
}

// FuzzAddresses feeds arbitrary bytes, decoded as any response Addresses
// handles, through the filter. It must never panic, a successful rewrite
// must re-encode to bytes that decode, and every real address in the result
// must be the Mapper's.
func FuzzAddresses(f *testing.F) {
	for _, c := range addressCases {
		maxV := c.build().MaxVersion()
		for _, v := range []int16{0, maxV / 2, maxV} {
			r := c.build()
			r.SetVersion(v)
			f.Add(r.AppendTo(nil), c.key, v)
		}
	}
	keys := Addresses{}.ResponseKeys()
	f.Fuzz(func(t *testing.T, data []byte, key, version int16) {
		key = pickKey(key, keys)
		version = pickVersion(version, kmsg.ResponseForKey(key).MaxVersion())
		resp := decodeAs(key, version, data)
		if resp == nil {
			t.Skip("not a valid response")
		}
		before := len(endpointsOf(t, resp))

		if err := (Addresses{Mapper: fuzzMapper{}}).FilterResponse(resp); err != nil {
			if !errors.Is(err, errFuzzMapper) {
				t.Fatalf("FilterResponse: unexpected error %v", err)
			}
			return
		}

		out := resp.AppendTo(nil)
		final := decodeAs(key, version, out)
		if final == nil {
			t.Fatalf("rewritten %s v%d does not decode: %x", kmsg.NameForKey(key), version, out)
		}
		after := endpointsOf(t, final)
		if key == 55 {
			if len(after) != 0 {
				t.Fatalf("DescribeQuorum listeners survived: %+v", after)
			}
			return
		}
		if len(after) != before {
			t.Fatalf("%d addresses before rewrite, %d after", before, len(after))
		}
		for _, e := range after {
			if e.NodeID < 0 || e.Host == "" {
				continue // error placeholders; may be left as sent
			}
			if e.Host != proxyHost || e.Port != proxyPort(e.NodeID) {
				t.Fatalf("address not rewritten: %+v", e)
			}
		}
	})
}

// FuzzAPIVersionsClamp feeds arbitrary bytes, decoded as an ApiVersions
// response, through the clamp. It must never panic, the result must
// re-encode to bytes that decode, and every advertised key must be one kmsg
// can serve, with a non-empty range inside kmsg's.
func FuzzAPIVersionsClamp(f *testing.F) {
	for v := int16(0); v <= kmsg.NewPtrApiVersionsResponse().MaxVersion(); v++ {
		r := kmsg.NewPtrApiVersionsResponse()
		r.SetVersion(v)
		r.ApiKeys = []apiKey{{ApiKey: 3, MinVersion: 0, MaxVersion: 99}, {ApiKey: 30000, MaxVersion: 1}, {ApiKey: 18, MaxVersion: 4}}
		f.Add(r.AppendTo(nil), v)
	}
	maxV := kmsg.NewPtrApiVersionsResponse().MaxVersion()
	f.Fuzz(func(t *testing.T, data []byte, version int16) {
		version = pickVersion(version, maxV)
		resp := decodeAs(18, version, data)
		if resp == nil {
			t.Skip("not a valid response")
		}
		errorCode := resp.(*kmsg.ApiVersionsResponse).ErrorCode

		if err := (APIVersionsClamp{}).Clamp(resp.(*kmsg.ApiVersionsResponse)); err != nil {
			t.Fatalf("Clamp: %v", err)
		}

		out := resp.AppendTo(nil)
		final := decodeAs(18, version, out)
		if final == nil {
			t.Fatalf("clamped ApiVersions v%d does not decode: %x", version, out)
		}
		got := final.(*kmsg.ApiVersionsResponse)
		if got.ErrorCode != errorCode {
			t.Fatalf("ErrorCode changed from %d to %d", errorCode, got.ErrorCode)
		}
		for _, k := range got.ApiKeys {
			req := kmsg.RequestForKey(k.ApiKey)
			if req == nil {
				t.Fatalf("unknown key %d kept", k.ApiKey)
			}
			if k.MinVersion > k.MaxVersion || k.MaxVersion > req.MaxVersion() {
				t.Fatalf("key %d: range %d..%d outside kmsg's 0..%d", k.ApiKey, k.MinVersion, k.MaxVersion, req.MaxVersion())
			}
		}
	})
}
