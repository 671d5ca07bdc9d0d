package kms

import (
	"fmt"
	"time"
)

// DataKeysConfig bounds DEK reuse (`dek:` in the configuration) and the
// cache of unwrapped DEKs.
type DataKeysConfig struct {
	// MaxAge: a DEK encrypts no record later than this after the KMS
	// handed it out (dek.max_age).
	MaxAge time.Duration
	// MaxRecords: a DEK encrypts at most this many records
	// (dek.max_records).
	MaxRecords int64
	// UnwrappedSize bounds the cache of unwrapped DEKs (least recently
	// used out first); 0: DefaultUnwrappedSize.
	UnwrappedSize int
	// UnwrappedTTL is how long an unwrapped DEK is used without asking the
	// KMS again: a disabled or deleted KEK stops decryption within it.
	// 0: DefaultUnwrappedTTL.
	UnwrappedTTL time.Duration
}

const (
	// DefaultUnwrappedSize DEKs: a proxy reading many topics, each with a
	// few DEKs in its retained records.
	DefaultUnwrappedSize = 4096
	// DefaultUnwrappedTTL bounds how long crypto-shredding takes to reach
	// a running proxy.
	DefaultUnwrappedTTL = 5 * time.Minute
	// MinMaxAge: a DEK that aged out while it was being fetched would have
	// producers fetch DEKs without end.
	MinMaxAge = time.Second
	// MaxRecordsLimit: AES-GCM under one key is kept well inside the
	// 2^32-message bound NIST sets for random nonces.
	MaxRecordsLimit = 1 << 32
	// rejectedTTL is how long an unwrap the KMS refused for good is not
	// asked again: records with a bad envelope must not turn into one KMS
	// call each.
	rejectedTTL = 30 * time.Second
)

// Validate checks the bounds, naming the configuration key at fault.
func (c DataKeysConfig) Validate() error {
	if c.MaxAge < MinMaxAge {
		return fmt.Errorf("dek.max_age: %v: must be at least %v", c.MaxAge, MinMaxAge)
	}
	if c.MaxRecords <= 0 || c.MaxRecords > MaxRecordsLimit {
		return fmt.Errorf("dek.max_records: %d: must be between 1 and %d", c.MaxRecords, int64(MaxRecordsLimit))
	}
	if c.UnwrappedSize < 0 || c.UnwrappedTTL < 0 {
		return fmt.Errorf("unwrapped DEK cache: size %d and TTL %v must not be negative", c.UnwrappedSize, c.UnwrappedTTL)
	}
	return nil
}

func (c DataKeysConfig) withDefaults() DataKeysConfig {
	if c.UnwrappedSize == 0 {
		c.UnwrappedSize = DefaultUnwrappedSize
	}
	if c.UnwrappedTTL == 0 {
		c.UnwrappedTTL = DefaultUnwrappedTTL
	}
	return c
}
