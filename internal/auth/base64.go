package auth

import (
	"encoding/base64"
	"errors"
)

var errNotBase64 = errors.New("not padded standard base64")

// decodeBase64 decodes padded standard base64 strictly. The standard
// decoder skips CR and LF even in strict mode, which would let two
// different strings stand for one value; they are refused here.
func decodeBase64(s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' || s[i] == '\n' {
			return nil, errNotBase64
		}
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, errNotBase64
	}
	return b, nil
}
