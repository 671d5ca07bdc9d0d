package pointer

// Version is the only envelope version there is: the value of "kfs_lfs".
const Version = 1

// Pointer is one decoded envelope. The JSON names are KafScale's; the
// field order is the order Encode writes them in, "kfs_lfs" first so that
// Detect (and KafScale's resolvers, which look only at the first 50 bytes)
// recognise the record.
type Pointer struct {
	// Version is "kfs_lfs"; always Version.
	Version int `json:"kfs_lfs"`
	// Bucket and Key name the object holding the original value.
	Bucket string `json:"bucket"`
	Key    string `json:"key"`
	// Size is the original value's length in bytes.
	Size int64 `json:"size"`
	// SHA256 is the value's SHA-256 as 64 lowercase hex digits. It is
	// written whatever ChecksumAlg says.
	SHA256 string `json:"sha256"`
	// Checksum and ChecksumAlg are the checksum the producer asked for
	// (KafScale's LFS_BLOB_ALG header): lowercase hex of ChecksumAlg's
	// digest. Both empty: SHA256 is the checksum.
	Checksum    string `json:"checksum,omitempty"`
	ChecksumAlg string `json:"checksum_alg,omitempty"`
	// ContentType is the record's content-type header, if any.
	ContentType string `json:"content_type,omitempty"`
	// OriginalHeaders copies the record's headers named in CarriedHeaders,
	// values as strings. The record keeps its headers besides.
	OriginalHeaders map[string]string `json:"original_headers,omitempty"`
	// CreatedAt is when the value was offloaded, RFC 3339 in UTC to the
	// second (FormatCreatedAt). Kept as written: KafScale does not parse it.
	CreatedAt string `json:"created_at,omitempty"`
	// ProxyID names the proxy instance that offloaded the value.
	ProxyID string `json:"proxy_id,omitempty"`
}
