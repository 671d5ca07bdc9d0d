package pointer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxEncodedBytes bounds a pointer, encoded or decoded. KafScale's
// pointers are a few hundred bytes; a larger value is not a pointer and is
// refused before it is parsed.
const MaxEncodedBytes = 8 << 10

// ErrInvalid is the class of every Decode and Encode error.
var ErrInvalid = errors.New("invalid large-message pointer")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Encode checks p and writes it as KafScale's proxy does.
func Encode(p Pointer) ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	out, err := json.Marshal(p)
	if err != nil {
		return nil, invalid("%v", err)
	}
	if len(out) > MaxEncodedBytes {
		return nil, invalid("encoded pointer is %d bytes, over %d", len(out), MaxEncodedBytes)
	}
	return out, nil
}

// Decode parses a pointer strictly: at most MaxEncodedBytes, one JSON
// object with the fields of Pointer (others are ignored: later KafScale
// versions may add some), and the checks of Validate. Every error is
// ErrInvalid.
func Decode(value []byte) (Pointer, error) {
	if len(value) > MaxEncodedBytes {
		return Pointer{}, invalid("%d bytes, over %d", len(value), MaxEncodedBytes)
	}
	var wire struct {
		Pointer
		Size *int64 `json:"size"` // required: a pointer without a size is refused
	}
	dec := json.NewDecoder(bytes.NewReader(value))
	if err := dec.Decode(&wire); err != nil {
		return Pointer{}, invalid("%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Pointer{}, invalid("data after the JSON object")
	}
	if wire.Size == nil {
		return Pointer{}, invalid(`"size" missing`)
	}
	p := wire.Pointer
	p.Size = *wire.Size
	p.SHA256 = strings.ToLower(p.SHA256)
	p.Checksum = strings.ToLower(p.Checksum)
	if err := p.Validate(); err != nil {
		return Pointer{}, err
	}
	return p, nil
}

// Validate checks what a resolver relies on: the version, a bucket and a
// key, a size that is not negative, a SHA-256 of 64 lowercase hex digits
// and a checksum that fits its algorithm.
func (p Pointer) Validate() error {
	switch {
	case p.Version != Version:
		return invalid(`"kfs_lfs" is %d, want %d`, p.Version, Version)
	case p.Bucket == "":
		return invalid(`"bucket" missing`)
	case p.Key == "":
		return invalid(`"key" missing`)
	case p.Size < 0:
		return invalid(`"size" is %d`, p.Size)
	case !isHex(p.SHA256, checksumHexLen[ChecksumSHA256]):
		return invalid(`"sha256" %q is not 64 lowercase hex digits`, p.SHA256)
	}
	return p.validateChecksum()
}

func (p Pointer) validateChecksum() error {
	alg := p.ChecksumAlg
	if alg == "" {
		alg = ChecksumSHA256
	}
	if alg == ChecksumNone {
		if p.Checksum != "" {
			return invalid(`"checksum" given with "checksum_alg" none`)
		}
		return nil
	}
	n, known := checksumHexLen[alg]
	if !known {
		return invalid(`"checksum_alg" %q is none of sha256, md5, crc32, none`, p.ChecksumAlg)
	}
	if p.Checksum != "" && !isHex(p.Checksum, n) {
		return invalid(`"checksum" %q is not %d lowercase hex digits of %s`, p.Checksum, n, alg)
	}
	return nil
}

// Expected is the algorithm and digest a resolver checks the fetched
// value against, as KafScale's resolvers choose them: "checksum" under
// "checksum_alg" when both are there, else "sha256"; ok is false for
// "checksum_alg" none.
func (p Pointer) Expected() (alg, digest string, ok bool) {
	switch {
	case p.ChecksumAlg == ChecksumNone:
		return ChecksumNone, "", false
	case p.Checksum != "":
		if p.ChecksumAlg == "" {
			return ChecksumSHA256, p.Checksum, true
		}
		return p.ChecksumAlg, p.Checksum, true
	default:
		return ChecksumSHA256, p.SHA256, true
	}
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
