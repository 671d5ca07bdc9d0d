package kms

import (
	"crypto/aes"
	"crypto/cipher"
	"fmt"

	"github.com/kproxy/kproxy/internal/errclass"
)

// DEK is a data key ready for records: its AES-256-GCM AEAD is built once,
// so sealing and opening a record allocate nothing. The plaintext key is
// kept only inside the AEAD.
type DEK struct {
	AEAD    cipher.AEAD
	Wrapped []byte // what records carry to find the DEK again
	KeyID   string // the KEK that wrapped it, as the KMS resolved it
}

// newDEK builds the AEAD of a key the KMS handed out.
func newDEK(plaintext, wrapped []byte, keyID string) (*DEK, error) {
	if len(plaintext) != DEKSize {
		return nil, errclass.Mark(ErrRejected, fmt.Errorf("data key of %d bytes, want %d", len(plaintext), DEKSize))
	}
	block, err := aes.NewCipher(plaintext)
	if err != nil {
		return nil, errclass.Mark(ErrRejected, fmt.Errorf("data key: %w", err))
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, errclass.Mark(ErrRejected, fmt.Errorf("data key: %w", err))
	}
	clear(plaintext)
	return &DEK{AEAD: aead, Wrapped: wrapped, KeyID: keyID}, nil
}
