package envelope

import (
	"fmt"
	"math"
)

// KeySize is the length of a DEK's plaintext: AES-256.
const KeySize = 32

// DEK is a data-encryption key as the KMS hands it out: the plaintext key,
// its wrapped (KMS-encrypted) form and the id of the key-encryption key
// that wrapped it. The wrapped form and the KEK id travel with every
// record, so a consumer can unwrap the DEK from any single record.
type DEK struct {
	Plaintext []byte // KeySize bytes; never leaves the process
	Wrapped   []byte // opaque KMS ciphertext, 1 to 65535 bytes
	KEKID     string // the KEK's resolved id or ARN, at most 65535 bytes
}

func (d DEK) validate() error {
	switch {
	case len(d.Plaintext) != KeySize:
		return fmt.Errorf("%w: plaintext is %d bytes, want %d", ErrInvalidDEK, len(d.Plaintext), KeySize)
	case len(d.Wrapped) == 0 || len(d.Wrapped) > math.MaxUint16:
		return fmt.Errorf("%w: wrapped form is %d bytes, want 1 to %d", ErrInvalidDEK, len(d.Wrapped), math.MaxUint16)
	case len(d.KEKID) > math.MaxUint16:
		return fmt.Errorf("%w: KEK id is %d bytes, at most %d", ErrInvalidDEK, len(d.KEKID), math.MaxUint16)
	}
	return nil
}
