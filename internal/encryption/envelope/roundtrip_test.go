package envelope

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sync"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	dek := testDEK("wrapped-dek-1")
	s := mustSealer(t, dek)
	o := mustOpener(t, dek.Plaintext)
	for _, value := range [][]byte{{}, []byte("v"), bytes.Repeat([]byte("x"), 1<<20)} {
		r := sealRecord(t, s, "payments.cards", value, "trace-id", []byte("abc"))
		if len(r.value) != len(value)+Overhead {
			t.Fatalf("sealed value is %d bytes for %d plaintext bytes, want +%d", len(r.value), len(value), Overhead)
		}
		// A byte or two turn up in random ciphertext by chance (one byte
		// in about one run of nine): only longer plaintexts tell.
		if len(value) >= 8 && bytes.Contains(r.value, value) {
			t.Fatal("sealed value contains the plaintext")
		}
		gotValue, gotHeader, err := openRecord(o, "payments.cards", r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gotValue, value) || string(gotHeader) != "abc" {
			t.Fatalf("opened %d value bytes and header %q, want %d and %q", len(gotValue), gotHeader, len(value), "abc")
		}
	}
}

func TestRoundTripAppendsAfterExistingBytes(t *testing.T) {
	dek := testDEK("wrapped-dek-1")
	s := mustSealer(t, dek)
	o := mustOpener(t, dek.Plaintext)
	sealed, err := s.SealValue([]byte("prefix"), Value, "t", []byte("value"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseMarker(s.markers[Value])
	if err != nil {
		t.Fatal(err)
	}
	opened, err := o.OpenValue([]byte("out:"), m, "t", sealed[len("prefix"):])
	if err != nil || string(opened) != "out:value" || string(sealed[:6]) != "prefix" {
		t.Fatalf("opened %q, %v; sealed prefix %q", opened, err, sealed[:6])
	}
}

func TestMarkerCarriesDEKAndParts(t *testing.T) {
	dek := testDEK("wrapped-dek-1")
	s := mustSealer(t, dek)
	for _, parts := range []Parts{Value, HeaderValues, Value | HeaderValues} {
		b, err := s.Marker(parts)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseMarker(b)
		if err != nil {
			t.Fatal(err)
		}
		if m.Parts != parts || string(m.Wrapped) != string(dek.Wrapped) || string(m.KEKID) != dek.KEKID {
			t.Fatalf("marker %x parsed as parts %d, wrapped %q, KEK %q", b, m.Parts, m.Wrapped, m.KEKID)
		}
	}
	for _, parts := range []Parts{0, 4, 0xff} {
		if _, err := s.Marker(parts); !errors.Is(err, ErrMalformed) {
			t.Fatalf("Marker(%#x) = %v, want ErrMalformed", byte(parts), err)
		}
	}
}

func TestPartsOutsideTheMarkerAreRefused(t *testing.T) {
	dek := testDEK("wrapped-dek-1")
	s := mustSealer(t, dek)
	if _, err := s.SealHeader(nil, Value, "t", []byte("h"), []byte("v")); !errors.Is(err, ErrMalformed) {
		t.Fatalf("sealing a header of a value-only record: %v, want ErrMalformed", err)
	}
	sealed, err := s.SealValue(nil, Value, "t", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseMarker(s.markers[Value])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mustOpener(t, dek.Plaintext).OpenHeader(nil, m, "t", []byte("h"), sealed); !errors.Is(err, ErrMalformed) {
		t.Fatalf("opening a header of a value-only record: %v, want ErrMalformed", err)
	}
}

func TestTheMarkerHeaderIsNeverSealed(t *testing.T) {
	dek := testDEK("wrapped-dek-1")
	s := mustSealer(t, dek)
	if _, err := s.SealHeader(nil, HeaderValues, "t", []byte(HeaderName), []byte("v")); !errors.Is(err, ErrMalformed) {
		t.Fatalf("sealing the marker header: %v, want ErrMalformed", err)
	}
	m, err := ParseMarker(s.markers[HeaderValues])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mustOpener(t, dek.Plaintext).OpenHeader(nil, m, "t", []byte(HeaderName), make([]byte, Overhead)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("opening the marker header: %v, want ErrMalformed", err)
	}
}

// TestSealerSharedByGoroutines: one Sealer serves concurrent producers
// (run with -race); every part opens and no nonce repeats.
func TestSealerSharedByGoroutines(t *testing.T) {
	dek := testDEK("wrapped-dek-1")
	s := mustSealer(t, dek)
	o := mustOpener(t, dek.Plaintext)
	m, err := ParseMarker(s.markers[Value])
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, perGoroutine = 8, 2000
	sealed := make([][][]byte, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				v, err := s.SealValue(nil, Value, "t", []byte{byte(g), byte(i)})
				if err != nil {
					t.Error(err)
					return
				}
				sealed[g] = append(sealed[g], v)
			}
		})
	}
	wg.Wait()
	seen := make(map[[NonceSize]byte]bool)
	for g, parts := range sealed {
		for i, v := range parts {
			got, err := o.OpenValue(nil, m, "t", v)
			if err != nil || !bytes.Equal(got, []byte{byte(g), byte(i)}) {
				t.Fatalf("goroutine %d part %d opened %x, %v", g, i, got, err)
			}
			nonce := [NonceSize]byte(v[:NonceSize])
			if seen[nonce] {
				t.Fatalf("nonce %x repeated", nonce)
			}
			seen[nonce] = true
		}
	}
	if n := s.seals.Load(); n != goroutines*perGoroutine {
		t.Fatalf("sealer counted %d seals, want %d", n, goroutines*perGoroutine)
	}
}

func TestNoncesDiffer(t *testing.T) {
	s := mustSealer(t, testDEK("w"))
	seen := make(map[[NonceSize]byte]bool)
	for range 100000 {
		sealed, err := s.SealValue(nil, Value, "t", nil)
		if err != nil {
			t.Fatal(err)
		}
		nonce := [NonceSize]byte(sealed[:NonceSize])
		if seen[nonce] {
			t.Fatalf("nonce %x repeated", nonce)
		}
		seen[nonce] = true
	}
}

// TestNoncesAreFixedFieldAndCount: a Sealer's nonces are its random
// 4-byte field and its count of seals, 1, 2, 3, ... (NIST SP 800-38D
// deterministic construction), and two Sealers of one DEK draw different
// fixed fields.
func TestNoncesAreFixedFieldAndCount(t *testing.T) {
	a, b := mustSealer(t, testDEK("w")), mustSealer(t, testDEK("w"))
	var fixed []byte
	for i := range uint64(3) {
		sealed, err := a.SealValue(nil, Value, "t", []byte("v"))
		if err != nil {
			t.Fatal(err)
		}
		if fixed == nil {
			fixed = sealed[:4]
		}
		if !bytes.Equal(sealed[:4], fixed) || binary.BigEndian.Uint64(sealed[4:NonceSize]) != i+1 {
			t.Fatalf("seal %d nonce %x: want %x then count %d", i+1, sealed[:NonceSize], fixed, i+1)
		}
	}
	other, err := b.SealValue(nil, Value, "t", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(other[:4], fixed) {
		t.Errorf("two Sealers of one DEK share the fixed field %x", fixed)
	}
}

func TestSealerStopsAtItsBound(t *testing.T) {
	s := mustSealer(t, testDEK("w"))
	s.seals.Store(MaxSealsPerDEK - 1)
	if _, err := s.SealValue(nil, Value, "t", []byte("last")); err != nil {
		t.Fatalf("seal %d: %v", uint64(MaxSealsPerDEK), err)
	}
	if _, err := s.SealValue(nil, Value, "t", []byte("one too many")); !errors.Is(err, ErrDEKExhausted) {
		t.Fatalf("seal past the bound: %v, want ErrDEKExhausted", err)
	}
}

func TestInvalidDEKsAreRefused(t *testing.T) {
	good := testDEK("w")
	for name, dek := range map[string]DEK{
		"short key":      {Plaintext: good.Plaintext[:16], Wrapped: good.Wrapped, KEKID: good.KEKID},
		"no wrapped":     {Plaintext: good.Plaintext, KEKID: good.KEKID},
		"wrapped 64 KiB": {Plaintext: good.Plaintext, Wrapped: make([]byte, 1<<16), KEKID: good.KEKID},
	} {
		if _, err := NewSealer(dek); !errors.Is(err, ErrInvalidDEK) {
			t.Errorf("%s: NewSealer = %v, want ErrInvalidDEK", name, err)
		}
	}
	if _, err := NewOpener(good.Plaintext[:31]); !errors.Is(err, ErrInvalidDEK) {
		t.Errorf("NewOpener with 31 bytes = %v, want ErrInvalidDEK", err)
	}
}

func TestClientMarkerIsRecognisedAndRefusedAsInvalidRecord(t *testing.T) {
	if !IsMarker([]byte(HeaderName)) {
		t.Fatalf("IsMarker(%q) = false", HeaderName)
	}
	for _, name := range []string{"", "kproxy.encryptio", "kproxy.encryption ", "Kproxy.Encryption"} {
		if IsMarker([]byte(name)) {
			t.Errorf("IsMarker(%q) = true", name)
		}
	}
	if ClientMarkerError.Code != 87 || ClientMarkerError.Retriable {
		t.Fatalf("ClientMarkerError = %v (code %d, retriable %v), want INVALID_RECORD (87), not retriable",
			ClientMarkerError, ClientMarkerError.Code, ClientMarkerError.Retriable)
	}
}
