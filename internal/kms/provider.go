// Package kms is the key-management seam of record encryption: a Provider
// wraps and unwraps data-encryption keys (DEKs) under key-encryption keys
// (KEKs) held by a KMS, DataKeys reuses and caches DEKs within their bounds
// so KMS calls do not grow with the record rate, and KeyTemplate maps the
// `key:` template of a topic rule onto a KMS key name.
package kms

import "context"

// DEKSize is the length of a plaintext DEK: an AES-256 key.
const DEKSize = 32

// Provider is a KMS holding key-encryption keys. Errors are classified:
// see ErrKeyUnavailable, ErrRetriable and ErrRejected. Calls bound their
// own time: DataKeys lets a call go on for the callers still waiting when
// the one that started it gives up.
type Provider interface {
	// GenerateDataKey returns a fresh DEK under the KEK keyID (a key id,
	// key ARN, alias name or alias ARN).
	GenerateDataKey(ctx context.Context, keyID string) (DataKey, error)
	// Decrypt unwraps a DEK's Wrapped blob into its plaintext.
	Decrypt(ctx context.Context, wrapped []byte) ([]byte, error)
}

// DataKey is a DEK as the KMS hands it out.
type DataKey struct {
	Plaintext []byte // DEKSize bytes; never logged nor stored
	Wrapped   []byte // the DEK encrypted under the KEK: what records carry
	KeyID     string // the KEK that wrapped it, resolved (the key ARN for AWS KMS)
}
