package pointer

import "bytes"

// KafScale's resolvers (Go, Java and Python SDKs alike) take a value for a
// pointer when it is at least 15 bytes long, starts with '{' and has the
// quoted name "kfs_lfs" within its first 50 bytes. There is no header
// marking a pointer record: the value alone decides.
const (
	detectMinLen = 15
	detectWindow = 50
)

var marker = []byte(`"kfs_lfs"`)

// Detect tells whether value is a pointer by KafScale's rule. A value it
// accepts may still fail Decode.
func Detect(value []byte) bool {
	if len(value) < detectMinLen || value[0] != '{' {
		return false
	}
	return bytes.Contains(value[:min(len(value), detectWindow)], marker)
}
