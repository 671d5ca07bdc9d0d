package rewrite

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// kmsgMax is the highest version kmsg knows for key; tests use it rather
// than literals so they keep meaning the same thing across kmsg upgrades.
func kmsgMax(t testing.TB, key int16) int16 {
	t.Helper()
	req := kmsg.RequestForKey(key)
	if req == nil {
		t.Fatalf("kmsg does not know key %d", key)
	}
	return req.MaxVersion()
}

type apiKey = kmsg.ApiVersionsResponseApiKey

func TestClampVersions(t *testing.T) {
	metaMax := kmsgMax(t, 3)
	tests := []struct {
		name            string
		key, minV, maxV int16
		wantMax         int16
		wantOK          bool
	}{
		{"within range", 3, 0, metaMax - 1, metaMax - 1, true},
		{"exactly kmsg max", 3, 0, metaMax, metaMax, true},
		{"above kmsg max", 3, 0, metaMax + 5, metaMax, true},
		{"min equals clamped max", 3, metaMax, metaMax + 5, metaMax, true},
		{"min above kmsg max", 3, metaMax + 1, metaMax + 5, 0, false},
		{"unknown key", 30000, 0, 3, 0, false},
		{"negative key", -1, 0, 3, 0, false},
		// An upstream advertising an inverted range is broken; the clamp
		// must not invent a usable one.
		{"inverted upstream range", 3, 4, 2, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotMax, gotOK := clampVersions(tt.key, tt.minV, tt.maxV)
			if gotMax != tt.wantMax || gotOK != tt.wantOK {
				t.Fatalf("clampVersions(%d, %d, %d) = %d, %v; want %d, %v",
					tt.key, tt.minV, tt.maxV, gotMax, gotOK, tt.wantMax, tt.wantOK)
			}
		})
	}
}

func TestAPIVersionsClampKeys(t *testing.T) {
	produceMax, metaMax, avMax := kmsgMax(t, 0), kmsgMax(t, 3), kmsgMax(t, 18)
	tests := []struct {
		name string
		in   []apiKey
		want []apiKey
	}{
		{
			name: "unknown key dropped",
			in:   []apiKey{{ApiKey: 0, MinVersion: 0, MaxVersion: 3}, {ApiKey: 30000, MinVersion: 0, MaxVersion: 1}, {ApiKey: 3, MinVersion: 0, MaxVersion: 4}},
			want: []apiKey{{ApiKey: 0, MinVersion: 0, MaxVersion: 3}, {ApiKey: 3, MinVersion: 0, MaxVersion: 4}},
		},
		{
			name: "max clamped, order kept",
			in:   []apiKey{{ApiKey: 3, MinVersion: 0, MaxVersion: 99}, {ApiKey: 0, MinVersion: 3, MaxVersion: 99}, {ApiKey: 18, MinVersion: 0, MaxVersion: avMax}},
			want: []apiKey{{ApiKey: 3, MinVersion: 0, MaxVersion: metaMax}, {ApiKey: 0, MinVersion: 3, MaxVersion: produceMax}, {ApiKey: 18, MinVersion: 0, MaxVersion: avMax}},
		},
		{
			name: "min above clamped max dropped",
			in:   []apiKey{{ApiKey: 3, MinVersion: metaMax + 1, MaxVersion: metaMax + 3}, {ApiKey: 18, MinVersion: 0, MaxVersion: 3}},
			want: []apiKey{{ApiKey: 18, MinVersion: 0, MaxVersion: 3}},
		},
		{
			name: "all dropped",
			in:   []apiKey{{ApiKey: 30000, MinVersion: 0, MaxVersion: 1}, {ApiKey: 3, MinVersion: metaMax + 1, MaxVersion: metaMax + 1}},
			want: []apiKey{},
		},
		{
			name: "unknown tags of kept entries kept",
			in:   []apiKey{{ApiKey: 3, MinVersion: 0, MaxVersion: 99, UnknownTags: tagsOf(7, "x")}},
			want: []apiKey{{ApiKey: 3, MinVersion: 0, MaxVersion: metaMax, UnknownTags: tagsOf(7, "x")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := kmsg.NewPtrApiVersionsResponse()
			r.SetVersion(3)
			r.ApiKeys = tt.in
			if err := (APIVersionsClamp{}).Clamp(r); err != nil {
				t.Fatalf("Clamp: %v", err)
			}
			if len(r.ApiKeys) != len(tt.want) || (len(tt.want) > 0 && !reflect.DeepEqual(r.ApiKeys, tt.want)) {
				t.Fatalf("ApiKeys = %+v, want %+v", r.ApiKeys, tt.want)
			}
		})
	}
}

func tagsOf(key uint32, val string) kmsg.Tags {
	var tags kmsg.Tags
	tags.Set(key, []byte(val))
	return tags
}

// TestAPIVersionsUnsupportedVersionAnswer checks the UNSUPPORTED_VERSION
// answer a broker sends, in the v0 layout, when the client's ApiVersions
// version is too new: the error code and throttle survive and the one
// advertised key is clamped like any other.
func TestAPIVersionsUnsupportedVersionAnswer(t *testing.T) {
	const unsupportedVersion = 35
	avMax := kmsgMax(t, 18)

	src := kmsg.NewPtrApiVersionsResponse()
	src.SetVersion(0)
	src.ErrorCode = unsupportedVersion
	src.ApiKeys = []apiKey{{ApiKey: 18, MinVersion: 0, MaxVersion: avMax + 2}}
	_, resp := roundTrip(t, src)

	if err := (APIVersionsClamp{}).Clamp(resp.(*kmsg.ApiVersionsResponse)); err != nil {
		t.Fatalf("Clamp: %v", err)
	}
	_, final := roundTrip(t, resp)
	f := final.(*kmsg.ApiVersionsResponse)
	if f.ErrorCode != unsupportedVersion {
		t.Errorf("ErrorCode = %d, want %d", f.ErrorCode, unsupportedVersion)
	}
	want := []apiKey{{ApiKey: 18, MinVersion: 0, MaxVersion: avMax}}
	if !reflect.DeepEqual(f.ApiKeys, want) {
		t.Errorf("ApiKeys = %+v, want %+v", f.ApiKeys, want)
	}
}

// TestAPIVersionsRoundTripAllVersions runs decode → clamp → encode → decode
// at every ApiVersions version and checks that only ApiKeys changed.
func TestAPIVersionsRoundTripAllVersions(t *testing.T) {
	fetchMax, metaMax := kmsgMax(t, 1), kmsgMax(t, 3)
	for v := int16(0); v <= kmsg.NewPtrApiVersionsResponse().MaxVersion(); v++ {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			src := kmsg.NewPtrApiVersionsResponse()
			src.SetVersion(v)
			src.ErrorCode = 35 // kept even outside the v0 layout
			src.ThrottleMillis = 17
			src.ApiKeys = []apiKey{
				{ApiKey: 1, MinVersion: 4, MaxVersion: fetchMax + 4},
				{ApiKey: 30000, MinVersion: 0, MaxVersion: 2},
				{ApiKey: 3, MinVersion: metaMax + 2, MaxVersion: metaMax + 4},
				{ApiKey: 18, MinVersion: 0, MaxVersion: 3},
			}
			src.SupportedFeatures = []kmsg.ApiVersionsResponseSupportedFeature{{Name: "metadata.version", MinVersion: 1, MaxVersion: 20}}
			src.FinalizedFeaturesEpoch = 42
			src.FinalizedFeatures = []kmsg.ApiVersionsResponseFinalizedFeature{{Name: "metadata.version", MinVersionLevel: 1, MaxVersionLevel: 20}}
			_, resp := roundTrip(t, src)
			before := *resp.(*kmsg.ApiVersionsResponse)
			before.ApiKeys = nil // compared separately

			if err := (APIVersionsClamp{}).Clamp(resp.(*kmsg.ApiVersionsResponse)); err != nil {
				t.Fatalf("Clamp: %v", err)
			}
			_, final := roundTrip(t, resp)
			f := *final.(*kmsg.ApiVersionsResponse)

			wantKeys := []apiKey{
				{ApiKey: 1, MinVersion: 4, MaxVersion: fetchMax},
				{ApiKey: 18, MinVersion: 0, MaxVersion: 3},
			}
			if !reflect.DeepEqual(f.ApiKeys, wantKeys) {
				t.Errorf("ApiKeys = %+v, want %+v", f.ApiKeys, wantKeys)
			}
			f.ApiKeys = nil
			if !reflect.DeepEqual(f, before) {
				t.Errorf("non-ApiKeys fields changed:\n got %+v\nwant %+v", f, before)
			}
		})
	}
}

// The clamp registers one handler, for ApiVersions responses, and that
// handler refuses any other type.
func TestAPIVersionsClampRegisters(t *testing.T) {
	var reg filter.Registry
	APIVersionsClamp{}.Register(&reg)
	hs := reg.Responses()
	if len(hs) != 1 || hs[0].Key != 18 {
		t.Fatalf("registered %+v, want one handler for key 18", hs)
	}
	for _, resp := range []kmsg.Response{kmsg.NewPtrMetadataResponse(), nil} {
		if err := hs[0].Handle(resp); err == nil {
			t.Errorf("handler given %T succeeded, want error", resp)
		}
	}
}
