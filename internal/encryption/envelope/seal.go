package envelope

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync/atomic"
)

// Sizes of a sealed part: nonce || ciphertext || tag.
const (
	NonceSize = 12 // 96-bit GCM nonce, unique per part under one DEK
	TagSize   = 16
	Overhead  = NonceSize + TagSize // added to each sealed part's length
)

// MaxSealsPerDEK bounds the parts one Sealer seals: NIST SP 800-38D's
// limit of 2^32 invocations of one key, kept although the nonces' 64-bit
// counter would allow more; dek.max_records times the parts per record
// stays far below it in any sane configuration.
const MaxSealsPerDEK = 1 << 32

// fixedFieldSize is the part of a nonce fixed for one Sealer (NIST SP
// 800-38D section 8.2.1, deterministic construction); the other 8 bytes
// are the Sealer's count of seals.
const fixedFieldSize = NonceSize - 8

// Sealer seals record parts under one DEK. Build one per DEK and share it;
// it is safe for concurrent use.
type Sealer struct {
	aead    cipher.AEAD
	markers [allParts + 1][]byte // marker header value per Parts combination
	seals   atomic.Uint64
	aad     aadBuffers
	fixed   [fixedFieldSize]byte // random: the nonce field fixed for this Sealer
	nonce   func([]byte)         // tests: fills a nonce instead of fixed || count
}

// NewSealer prepares a DEK for sealing: the AES key schedule and the
// marker header values are built once here.
func NewSealer(dek DEK) (*Sealer, error) {
	aead, err := newAEAD(dek)
	if err != nil {
		return nil, err
	}
	return newSealer(aead, dek), nil
}

// newSealer builds a Sealer of a validated DEK whose AEAD is built.
func newSealer(aead cipher.AEAD, dek DEK) *Sealer {
	s := &Sealer{aead: aead}
	_, _ = rand.Read(s.fixed[:]) // never fails since Go 1.24
	for _, parts := range []Parts{Value, HeaderValues, Value | HeaderValues} {
		s.markers[parts] = appendMarker(nil, parts, dek)
	}
	return s
}

// Marker returns the marker header value to attach to a record whose
// sealed parts are parts (Value, HeaderValues or both). Callers must not
// modify it.
func (s *Sealer) Marker(parts Parts) ([]byte, error) {
	if parts == 0 || parts&^allParts != 0 {
		return nil, fmt.Errorf("%w: parts 0x%02x", ErrMalformed, byte(parts))
	}
	return s.markers[parts], nil
}

// SealValue appends the sealed form of a record value of topic to dst,
// which must not overlap value. parts must be the record's (those given to
// Marker). A null value is not sealed: the caller leaves it null.
func (s *Sealer) SealValue(dst []byte, parts Parts, topic string, value []byte) ([]byte, error) {
	return s.seal(dst, parts, Value, topic, nil, value)
}

// SealHeader appends the sealed form of the value of header name in a
// record of topic to dst, which must not overlap value. The marker header
// itself is never sealed, and a null header value stays null.
func (s *Sealer) SealHeader(dst []byte, parts Parts, topic string, name, value []byte) ([]byte, error) {
	return s.seal(dst, parts, HeaderValues, topic, name, value)
}

func (s *Sealer) seal(dst []byte, parts, part Parts, topic string, name, plaintext []byte) ([]byte, error) {
	marker, err := s.Marker(parts)
	if err != nil {
		return dst, err
	}
	if parts&part == 0 {
		return dst, fmt.Errorf("%w: sealing part 0x%02x of a record whose marker lists 0x%02x", ErrMalformed, byte(part), byte(parts))
	}
	if part == HeaderValues && IsMarker(name) {
		return dst, fmt.Errorf("%w: the %s header is never sealed", ErrMalformed, HeaderName)
	}
	count := s.seals.Add(1)
	if count > MaxSealsPerDEK {
		return dst, ErrDEKExhausted
	}
	// The nonce is the Sealer's random fixed field and its count of seals
	// (deterministic construction): unique under the DEK as long as one
	// Sealer seals with it, which the callers ensure (one per DEK, and a
	// DEK never leaves the process that asked the KMS for it), and the
	// random field keeps even a second Sealer of one DEK apart but for a
	// 2^-32 chance. Cheaper than crypto/rand per part.
	start := len(dst)
	dst = append(dst, s.fixed[:]...)
	dst = binary.BigEndian.AppendUint64(dst, count)
	nonce := dst[start:]
	if s.nonce != nil {
		s.nonce(nonce)
	}
	aad := s.aad.get()
	*aad = appendAAD(*aad, part, topic, name, marker)
	dst = s.aead.Seal(dst, nonce, plaintext, *aad)
	s.aad.put(aad)
	return dst, nil
}

func newAEAD(dek DEK) (cipher.AEAD, error) {
	if err := dek.validate(); err != nil {
		return nil, err
	}
	return newGCM(dek.Plaintext)
}

func newGCM(key []byte) (cipher.AEAD, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("%w: plaintext is %d bytes, want %d", ErrInvalidDEK, len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("aes key schedule: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("gcm: %w", err)
	}
	return aead, nil
}
