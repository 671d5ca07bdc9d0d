package envelope

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/vector.json from the code")

// vector is a record sealed with a fixed DEK and fixed nonces: the example
// docs/encryption.md shows, byte for byte.
type vector struct {
	DEKPlaintext string `json:"dek_plaintext"`
	WrappedDEK   string `json:"wrapped_dek"`
	KEKID        string `json:"kek_id"`
	Topic        string `json:"topic"`
	Parts        Parts  `json:"parts"`
	Value        string `json:"value"`
	ValueNonce   string `json:"value_nonce"`
	HeaderName   string `json:"header_name"`
	HeaderValue  string `json:"header_value"`
	HeaderNonce  string `json:"header_nonce"`

	Marker            string `json:"marker"`
	ValueAAD          string `json:"value_aad"`
	SealedValue       string `json:"sealed_value"`
	HeaderAAD         string `json:"header_aad"`
	SealedHeaderValue string `json:"sealed_header_value"`
}

const vectorPath = "testdata/vector.json"

// docPath is the user documentation whose wire format example must match.
const docPath = "../../../docs/encryption.md"

// sealVector seals the vector's inputs, deriving every output field.
func sealVector(t *testing.T, in vector) vector {
	t.Helper()
	dek := DEK{Plaintext: mustHex(t, in.DEKPlaintext), Wrapped: mustHex(t, in.WrappedDEK), KEKID: in.KEKID}
	s := mustSealer(t, dek)
	nonces := [][]byte{mustHex(t, in.ValueNonce), mustHex(t, in.HeaderNonce)}
	s.nonce = func(b []byte) { copy(b, nonces[0]); nonces = nonces[1:] }
	out := in
	marker, err := s.Marker(in.Parts)
	if err != nil {
		t.Fatal(err)
	}
	out.Marker = hex.EncodeToString(marker)
	out.ValueAAD = hex.EncodeToString(appendAAD(nil, Value, in.Topic, nil, marker))
	out.HeaderAAD = hex.EncodeToString(appendAAD(nil, HeaderValues, in.Topic, []byte(in.HeaderName), marker))
	v, err := s.SealValue(nil, in.Parts, in.Topic, []byte(in.Value))
	if err != nil {
		t.Fatal(err)
	}
	out.SealedValue = hex.EncodeToString(v)
	h, err := s.SealHeader(nil, in.Parts, in.Topic, []byte(in.HeaderName), []byte(in.HeaderValue))
	if err != nil {
		t.Fatal(err)
	}
	out.SealedHeaderValue = hex.EncodeToString(h)
	return out
}

func readVector(t *testing.T) vector {
	t.Helper()
	b, err := os.ReadFile(vectorPath)
	if err != nil {
		t.Fatal(err)
	}
	var v vector
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", vectorPath, err)
	}
	return v
}

// TestVector: the code seals the vector's inputs into exactly the bytes the
// file records, and opens them back (run with -update after a deliberate
// format change, then update docs/encryption.md).
func TestVector(t *testing.T) {
	want := readVector(t)
	got := sealVector(t, want)
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(vectorPath, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Fatalf("sealing %s gives\n%+v\nthe file records\n%+v", vectorPath, got, want)
	}
	m, err := ParseMarker(mustHex(t, want.Marker))
	if err != nil {
		t.Fatal(err)
	}
	o := mustOpener(t, mustHex(t, want.DEKPlaintext))
	value, err := o.OpenValue(nil, m, want.Topic, mustHex(t, want.SealedValue))
	if err != nil || string(value) != want.Value {
		t.Fatalf("opened value %q, %v; want %q", value, err, want.Value)
	}
	header, err := o.OpenHeader(nil, m, want.Topic, []byte(want.HeaderName), mustHex(t, want.SealedHeaderValue))
	if err != nil || string(header) != want.HeaderValue {
		t.Fatalf("opened header %q, %v; want %q", header, err, want.HeaderValue)
	}
}

// TestDocShowsTheVector: every byte string of the vector appears in
// docs/encryption.md (whitespace inside the doc's hex is ignored), so the
// documented example cannot drift from the code.
func TestDocShowsTheVector(t *testing.T) {
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.ToLower(strings.Join(strings.Fields(string(b)), ""))
	v := readVector(t)
	for name, hexValue := range map[string]string{
		"dek_plaintext": v.DEKPlaintext, "wrapped_dek": v.WrappedDEK, "value_nonce": v.ValueNonce, "header_nonce": v.HeaderNonce,
		"marker": v.Marker, "value_aad": v.ValueAAD, "sealed_value": v.SealedValue,
		"header_aad": v.HeaderAAD, "sealed_header_value": v.SealedHeaderValue,
	} {
		if !strings.Contains(doc, hexValue) {
			t.Errorf("%s does not show %s %s", docPath, name, hexValue)
		}
	}
	for _, text := range []string{v.KEKID, v.Topic, v.Value, v.HeaderName, v.HeaderValue, HeaderName} {
		if !bytes.Contains(b, []byte(text)) {
			t.Errorf("%s does not name %q", docPath, text)
		}
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("hex %q: %v", s, err)
	}
	return b
}

// TestVectorOpensByTheDocAlone reads the vector as another tool would,
// following docs/encryption.md with the standard library's AES-GCM and
// none of this package's code: the marker's fields by offset, the AAD
// composed by hand.
func TestVectorOpensByTheDocAlone(t *testing.T) {
	v := readVector(t)
	marker := mustHex(t, v.Marker)
	if marker[0] != 1 || marker[1] != 3 {
		t.Fatalf("marker starts %x, want version 01, parts 03", marker[:2])
	}
	k := int(binary.BigEndian.Uint16(marker[2:]))
	w := int(binary.BigEndian.Uint16(marker[4+k:]))
	if string(marker[4:4+k]) != v.KEKID || hex.EncodeToString(marker[6+k:6+k+w]) != v.WrappedDEK || 6+k+w != len(marker) {
		t.Fatalf("marker %x does not hold KEK id %q and wrapped DEK %s as documented", marker, v.KEKID, v.WrappedDEK)
	}
	block, err := aes.NewCipher(mustHex(t, v.DEKPlaintext))
	if err != nil {
		t.Fatal(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	aad := func(part byte, name string) []byte {
		b := []byte{part}
		b = binary.BigEndian.AppendUint32(b, uint32(len(v.Topic)))
		b = append(b, v.Topic...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(name)))
		b = append(b, name...)
		return append(b, marker...)
	}
	for _, p := range []struct {
		sealed, want, name string
		part               byte
	}{{v.SealedValue, v.Value, "", 1}, {v.SealedHeaderValue, v.HeaderValue, v.HeaderName, 2}} {
		sealed := mustHex(t, p.sealed)
		plain, err := gcm.Open(nil, sealed[:12], sealed[12:], aad(p.part, p.name))
		if err != nil || string(plain) != p.want {
			t.Fatalf("part %d opened %q, %v; want %q", p.part, plain, err, p.want)
		}
	}
}
