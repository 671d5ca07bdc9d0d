package pointer

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecode: Decode never panics, and what it accepts survives an
// Encode and Decode round trip unchanged and is detected.
func FuzzDecode(f *testing.F) {
	for _, v := range kafscaleVectors(f) {
		f.Add([]byte(v.Value))
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		p, err := Decode(value)
		if err != nil {
			return
		}
		out, err := Encode(p)
		if err != nil {
			t.Fatalf("decoded %q but cannot encode it: %v", value, err)
		}
		if !Detect(out) {
			t.Fatalf("our encoding is not detected: %q", out)
		}
		again, err := Decode(out)
		if err != nil {
			t.Fatalf("cannot decode our own encoding %q: %v", out, err)
		}
		a, _ := json.Marshal(p)
		b, _ := json.Marshal(again)
		if !bytes.Equal(a, b) {
			t.Fatalf("round trip changed the pointer\n %s\n %s", a, b)
		}
	})
}
