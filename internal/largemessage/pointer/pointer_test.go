package pointer

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

type vector struct {
	Name      string `json:"name"`
	Source    string `json:"source"`
	Value     string `json:"value"`
	Detect    bool   `json:"detect"`
	Valid     bool   `json:"valid"`
	Canonical bool   `json:"canonical"`
}

func kafscaleVectors(t testing.TB) []vector {
	t.Helper()
	raw, err := os.ReadFile("testdata/kafscale_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct{ Vectors []vector }
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatalf("testdata/kafscale_vectors.json: %v", err)
	}
	return file.Vectors
}

// KafScale's own envelopes: Detect answers what KafScale's IsLfsEnvelope
// answers, Decode accepts exactly the valid ones, and an envelope KafScale
// encoded comes out of Encode byte for byte.
func TestKafScaleVectors(t *testing.T) {
	for _, v := range kafscaleVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			if got := Detect([]byte(v.Value)); got != v.Detect {
				t.Errorf("Detect = %v, want %v (%s)", got, v.Detect, v.Source)
			}
			p, err := Decode([]byte(v.Value))
			if (err == nil) != v.Valid {
				t.Fatalf("Decode error = %v, want valid=%v (%s)", err, v.Valid, v.Source)
			}
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("Decode error %v is not ErrInvalid", err)
				}
				return
			}
			out, err := Encode(p)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if !Detect(out) {
				t.Errorf("our encoding is not detected: %s", out)
			}
			if v.Canonical && string(out) != v.Value {
				t.Errorf("Encode differs from KafScale's encoding\n got %s\nwant %s", out, v.Value)
			}
		})
	}
}

func TestDecodeFields(t *testing.T) {
	v := kafscaleVectors(t)[0]
	p, err := Decode([]byte(v.Value))
	if err != nil {
		t.Fatal(err)
	}
	want := Pointer{Version: 1, Bucket: "kafscale-lfs",
		Key:             "prod/events/lfs/2026/02/01/obj-550e8400-e29b-41d4-a716-446655440000",
		Size:            5242880,
		SHA256:          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		ContentType:     "image/png",
		OriginalHeaders: map[string]string{"user-id": "123", "source": "upload"},
		CreatedAt:       "2026-02-01T12:00:00Z", ProxyID: "lfs-proxy-0"}
	got, _ := json.Marshal(p)
	exp, _ := json.Marshal(want)
	if !bytes.Equal(got, exp) {
		t.Errorf("decoded\n %s\nwant\n %s", got, exp)
	}
}

const emptySHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func TestDecodeRefuses(t *testing.T) {
	base := `"bucket":"b","key":"k","size":1,"sha256":"` + emptySHA + `"`
	cases := map[string]string{
		"version 2":          `{"kfs_lfs":2,` + base + `}`,
		"fractional version": `{"kfs_lfs":1.5,` + base + `}`,
		"no size":            `{"kfs_lfs":1,"bucket":"b","key":"k","sha256":"` + emptySHA + `"}`,
		"negative size":      `{"kfs_lfs":1,"bucket":"b","key":"k","size":-1,"sha256":"` + emptySHA + `"}`,
		"size as string":     `{"kfs_lfs":1,"bucket":"b","key":"k","size":"1","sha256":"` + emptySHA + `"}`,
		"short sha256":       `{"kfs_lfs":1,"bucket":"b","key":"k","size":1,"sha256":"abc"}`,
		"base64 sha256":      `{"kfs_lfs":1,"bucket":"b","key":"k","size":1,"sha256":"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}`,
		"unknown alg":        `{"kfs_lfs":1,` + base + `,"checksum_alg":"sha1"}`,
		"md5 of wrong size":  `{"kfs_lfs":1,` + base + `,"checksum_alg":"md5","checksum":"abcd"}`,
		"checksum with none": `{"kfs_lfs":1,` + base + `,"checksum_alg":"none","checksum":"00000000"}`,
		"headers as list":    `{"kfs_lfs":1,` + base + `,"original_headers":[{"key":"a","value":"b"}]}`,
		"trailing data":      `{"kfs_lfs":1,` + base + `} {}`,
		"too large":          `{"kfs_lfs":1,` + base + `,"proxy_id":"` + strings.Repeat("x", MaxEncodedBytes) + `"}`,
		"truncated":          `{"kfs_lfs":1,` + base,
	}
	for name, value := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Decode([]byte(value)); !errors.Is(err, ErrInvalid) {
				t.Fatalf("Decode(%.80s) = %v, want ErrInvalid", value, err)
			}
		})
	}
}

// Upper-case hex (a producer's LFS_BLOB checksum may be) is read as the
// same digest.
func TestDecodeLowersHex(t *testing.T) {
	p, err := Decode([]byte(`{"kfs_lfs":1,"bucket":"b","key":"k","size":0,"sha256":"` + strings.ToUpper(emptySHA) + `"}`))
	if err != nil || p.SHA256 != emptySHA {
		t.Fatalf("Decode = %+v, %v", p, err)
	}
}

func TestEncodeRefusesInvalid(t *testing.T) {
	for name, p := range map[string]Pointer{
		"zero":       {},
		"no bucket":  {Version: 1, Key: "k", SHA256: emptySHA},
		"no key":     {Version: 1, Bucket: "b", SHA256: emptySHA},
		"bad sha256": {Version: 1, Bucket: "b", Key: "k", SHA256: "abc"},
		"too large":  {Version: 1, Bucket: "b", Key: strings.Repeat("k", MaxEncodedBytes), SHA256: emptySHA},
	} {
		if _, err := Encode(p); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Encode = %v, want ErrInvalid", name, err)
		}
	}
}

// "kfs_lfs" must come first: KafScale's resolvers only look at the first
// 50 bytes, and a long bucket name would otherwise push it out.
func TestEncodeIsDetectedWithLongNames(t *testing.T) {
	out, err := Encode(Pointer{Version: 1, Bucket: strings.Repeat("b", 63), Key: strings.Repeat("k", 900), SHA256: emptySHA,
		OriginalHeaders: map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(out, []byte(`{"kfs_lfs":1,`)) || !Detect(out) {
		t.Fatalf("not detected: %.80s", out)
	}
}

func TestExpected(t *testing.T) {
	base := Pointer{Version: 1, Bucket: "b", Key: "k", SHA256: emptySHA}
	for _, c := range []struct {
		name            string
		alg, checksum   string
		wantAlg, digest string
		ok              bool
	}{
		{"sha256 only", "", "", ChecksumSHA256, emptySHA, true},
		{"crc32", ChecksumCRC32, "cbf43926", ChecksumCRC32, "cbf43926", true},
		{"md5 without checksum falls back", ChecksumMD5, "", ChecksumSHA256, emptySHA, true},
		{"none", ChecksumNone, "", ChecksumNone, "", false},
	} {
		p := base
		p.ChecksumAlg, p.Checksum = c.alg, c.checksum
		alg, digest, ok := p.Expected()
		if alg != c.wantAlg || digest != c.digest || ok != c.ok {
			t.Errorf("%s: Expected = %s %s %v", c.name, alg, digest, ok)
		}
	}
}

func TestObjectKey(t *testing.T) {
	at := time.Date(2026, 2, 1, 23, 30, 0, 0, time.FixedZone("x", -3600))
	if got, want := ObjectKey("", "events", at, "550e8400"), "default/events/lfs/2026/02/02/obj-550e8400"; got != want {
		t.Errorf("ObjectKey = %s, want %s", got, want)
	}
	if got := FormatCreatedAt(at); got != "2026-02-02T00:30:00Z" {
		t.Errorf("FormatCreatedAt = %s", got)
	}
}

// KafScale's resolvers look for "kfs_lfs" in the first 50 bytes exactly:
// a marker ending at byte 50 is a pointer, one ending at byte 51 is not.
func TestDetectWindowBoundary(t *testing.T) {
	marker := `"kfs_lfs"`
	at := func(end int) []byte { // a value whose marker ends at byte end
		pad := end - len(marker) - len(`{"p":"",`)
		return []byte(`{"p":"` + strings.Repeat("x", pad) + `",` + marker + `:1}`)
	}
	if v := at(50); !Detect(v) || !bytes.HasSuffix(v[:50], []byte(marker)) {
		t.Errorf("marker ending at byte 50 not detected: %s", v)
	}
	if v := at(51); Detect(v) {
		t.Errorf("marker ending at byte 51 detected: %s", v)
	}
}
