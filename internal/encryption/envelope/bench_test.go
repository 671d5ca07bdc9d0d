package envelope

import (
	"bytes"
	"testing"
)

// benchValueSize: a 1 KiB record value.
const benchValueSize = 1024

func BenchmarkSealValue(b *testing.B) {
	s := mustSealer(b, testDEK(string(bytes.Repeat([]byte("w"), 184)))) // AWS KMS wraps a 32-byte key in ~184 bytes
	value := bytes.Repeat([]byte("v"), benchValueSize)
	var dst []byte
	b.SetBytes(benchValueSize)
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = s.SealValue(dst[:0], Value, "payments.cards", value)
	}
}

func BenchmarkOpenValue(b *testing.B) {
	dek := testDEK(string(bytes.Repeat([]byte("w"), 184)))
	s := mustSealer(b, dek)
	o := mustOpener(b, dek.Plaintext)
	sealed, err := s.SealValue(nil, Value, "payments.cards", bytes.Repeat([]byte("v"), benchValueSize))
	if err != nil {
		b.Fatal(err)
	}
	m, err := ParseMarker(s.markers[Value])
	if err != nil {
		b.Fatal(err)
	}
	var dst []byte
	b.SetBytes(benchValueSize)
	b.ReportAllocs()
	for b.Loop() {
		if dst, err = o.OpenValue(dst[:0], m, "payments.cards", sealed); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawGCMSeal is the floor SealValue is compared with: AES-256-GCM
// Seal of the same value with a fixed nonce and no AAD.
func BenchmarkRawGCMSeal(b *testing.B) {
	aead, err := newGCM(testDEK("w").Plaintext)
	if err != nil {
		b.Fatal(err)
	}
	nonce := make([]byte, NonceSize)
	value := bytes.Repeat([]byte("v"), benchValueSize)
	var dst []byte
	b.SetBytes(benchValueSize)
	b.ReportAllocs()
	for b.Loop() {
		dst = aead.Seal(dst[:0], nonce, value, nil)
	}
}

// BenchmarkSealValueParallel: one Sealer shared by concurrent producers.
func BenchmarkSealValueParallel(b *testing.B) {
	s := mustSealer(b, testDEK(string(bytes.Repeat([]byte("w"), 184))))
	value := bytes.Repeat([]byte("v"), benchValueSize)
	b.SetBytes(benchValueSize)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var dst []byte
		for pb.Next() {
			dst, _ = s.SealValue(dst[:0], Value, "payments.cards", value)
		}
	})
}

// BenchmarkRawGCMOpen is the floor OpenValue is compared with.
func BenchmarkRawGCMOpen(b *testing.B) {
	aead, err := newGCM(testDEK("w").Plaintext)
	if err != nil {
		b.Fatal(err)
	}
	nonce := make([]byte, NonceSize)
	sealed := aead.Seal(nil, nonce, bytes.Repeat([]byte("v"), benchValueSize), nil)
	var dst []byte
	b.SetBytes(benchValueSize)
	b.ReportAllocs()
	for b.Loop() {
		if dst, err = aead.Open(dst[:0], nonce, sealed, nil); err != nil {
			b.Fatal(err)
		}
	}
}
