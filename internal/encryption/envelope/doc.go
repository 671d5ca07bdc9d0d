// Package envelope is the per-record format of kproxy's record encryption:
// it turns one record's value and header values into AES-256-GCM
// ciphertext under a data-encryption key (DEK) and back, and defines the
// marker header that carries the format version and the wrapped DEK with
// the record. docs/encryption.md ("Wire format") is the byte-level
// specification; testdata/vector.json holds the example it shows.
//
// No KMS here: a caller obtains a DEK (plaintext, wrapped form, KEK id)
// elsewhere, builds one Sealer per DEK for the produce path and one Opener
// per unwrapped DEK for the fetch path, and keeps them cached: building
// either costs allocations, using them costs none.
//
// Every function appends into a caller-provided buffer and allocates
// nothing in steady state, so a batch rewriter can reuse its buffers
// across records. Sealer and Opener are safe for concurrent use.
package envelope
