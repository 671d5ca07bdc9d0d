package protocol

import "github.com/twmb/franz-go/pkg/kmsg"

// apiTable is what kmsg knows about each API key, computed once because the
// header parser consults it for every frame.
type apiTable struct {
	known         []bool
	maxVersion    []int16
	flexibleSince []int16 // first flexible version, or -1 if never flexible
}

var apis = buildAPITable()

func buildAPITable() apiTable {
	var t apiTable
	for key := int16(0); ; key++ {
		req := kmsg.RequestForKey(key)
		if req == nil && kmsg.NameForKey(key) == "Unknown" {
			break
		}
		t.known = append(t.known, req != nil)
		if req == nil {
			t.maxVersion = append(t.maxVersion, -1)
			t.flexibleSince = append(t.flexibleSince, -1)
			continue
		}
		maxV := req.MaxVersion()
		since := int16(-1)
		for v := int16(0); v <= maxV; v++ {
			req.SetVersion(v)
			if req.IsFlexible() {
				since = v
				break
			}
		}
		t.maxVersion = append(t.maxVersion, maxV)
		t.flexibleSince = append(t.flexibleSince, since)
	}
	return t
}

// KnownAPI reports whether kmsg can encode and decode API key.
func KnownAPI(key int16) bool {
	return key >= 0 && int(key) < len(apis.known) && apis.known[key]
}

// MaxKnownKey is the highest API key kmsg has a name for.
func MaxKnownKey() int16 { return int16(len(apis.known) - 1) }

// MaxVersion is the highest version of key that kmsg can decode, or -1.
func MaxVersion(key int16) int16 {
	if !KnownAPI(key) {
		return -1
	}
	return apis.maxVersion[key]
}

// SupportedVersion reports whether kproxy can decode version of key.
func SupportedVersion(key, version int16) bool {
	return KnownAPI(key) && version >= 0 && version <= apis.maxVersion[key]
}

// IsFlexible reports whether version of key uses flexible (KIP-482) encoding
// and therefore the v2 request / v1 response header. A version above the
// highest kmsg knows is treated like that highest version: flexibility never
// goes away once introduced, and this is how a broker parses the header of an
// ApiVersions request newer than it understands (KIP-511).
func IsFlexible(key, version int16) bool {
	if !KnownAPI(key) {
		return false
	}
	since := apis.flexibleSince[key]
	return since >= 0 && version >= since
}
