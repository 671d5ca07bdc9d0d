package pointer

import "time"

// The record headers KafScale's proxy reads on produce.
const (
	// HeaderTrigger marks a record to offload whatever its size. Its value
	// is empty or the producer's checksum of the value (lowercase hex of
	// the algorithm HeaderChecksumAlg names, SHA-256 by default), which
	// the offloading proxy compares with its own. The header is removed
	// from the record it forwards.
	HeaderTrigger = "LFS_BLOB"
	// HeaderChecksumAlg names the checksum algorithm: one of the
	// ChecksumAlg values.
	HeaderChecksumAlg = "LFS_BLOB_ALG"
	// HeaderContentType is copied into Pointer.ContentType.
	HeaderContentType = "content-type"
)

// The checksum algorithms of "checksum_alg" and HeaderChecksumAlg.
const (
	ChecksumSHA256 = "sha256"
	ChecksumMD5    = "md5"
	ChecksumCRC32  = "crc32"
	ChecksumNone   = "none"
)

// checksumHexLen is each algorithm's digest length in hex digits.
var checksumHexLen = map[string]int{ChecksumSHA256: 64, ChecksumMD5: 32, ChecksumCRC32: 8}

// CarriedHeaders are the headers (compared in lower case) that KafScale's
// proxy copies into "original_headers"; any other header is left out of
// the pointer so that it cannot leak into a store or a log.
func CarriedHeaders() []string {
	return []string{"content-type", "content-encoding", "correlation-id", "message-id",
		"x-correlation-id", "x-request-id", "traceparent", "tracestate"}
}

// FormatCreatedAt writes t the way KafScale's proxy writes "created_at".
func FormatCreatedAt(t time.Time) string { return t.UTC().Format(time.RFC3339) }
