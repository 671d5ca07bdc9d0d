package envelope

import (
	"crypto/cipher"
	"fmt"
)

// NewSealerAEAD is NewSealer for a DEK whose plaintext is held only inside
// an AES-256-GCM AEAD already built (as the KMS layer's DEK cache keeps
// it), with its wrapped form and KEK id.
func NewSealerAEAD(aead cipher.AEAD, wrapped []byte, kekID string) (*Sealer, error) {
	if err := checkAEAD(aead); err != nil {
		return nil, err
	}
	dek := DEK{Plaintext: make([]byte, KeySize), Wrapped: wrapped, KEKID: kekID} // plaintext only for validate
	if err := dek.validate(); err != nil {
		return nil, err
	}
	return newSealer(aead, dek), nil
}

// NewOpenerAEAD is NewOpener for an unwrapped DEK held as an AES-256-GCM
// AEAD.
func NewOpenerAEAD(aead cipher.AEAD) (*Opener, error) {
	if err := checkAEAD(aead); err != nil {
		return nil, err
	}
	return &Opener{aead: aead}, nil
}

// checkAEAD refuses an AEAD whose sizes differ from the format's.
func checkAEAD(aead cipher.AEAD) error {
	if aead == nil || aead.NonceSize() != NonceSize || aead.Overhead() != TagSize {
		return fmt.Errorf("%w: want AES-GCM with a %d-byte nonce and a %d-byte tag", ErrInvalidDEK, NonceSize, TagSize)
	}
	return nil
}
