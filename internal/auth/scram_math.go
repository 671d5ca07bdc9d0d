package auth

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"fmt"
	"hash"
)

// The SCRAM key derivations of RFC 5802 section 3, named as there.

// saltedPassword is Hi(password, salt, i), which is PBKDF2 with HMAC.
// Passwords are used as given, without SASLprep, as Kafka does.
func saltedPassword(h func() hash.Hash, password string, salt []byte, iterations int) ([]byte, error) {
	key, err := pbkdf2.Key(h, password, salt, iterations, h().Size())
	if err != nil {
		return nil, fmt.Errorf("pbkdf2: %w", err)
	}
	return key, nil
}

func hmacSum(h func() hash.Hash, key []byte, parts ...[]byte) []byte {
	mac := hmac.New(h, key)
	for _, p := range parts {
		mac.Write(p)
	}
	return mac.Sum(nil)
}

func hashSum(h func() hash.Hash, b []byte) []byte {
	d := h()
	d.Write(b)
	return d.Sum(nil)
}

// clientKey is HMAC(SaltedPassword, "Client Key").
func clientKey(h func() hash.Hash, salted []byte) []byte {
	return hmacSum(h, salted, []byte("Client Key"))
}

// serverKey is HMAC(SaltedPassword, "Server Key").
func serverKey(h func() hash.Hash, salted []byte) []byte {
	return hmacSum(h, salted, []byte("Server Key"))
}

// storedKey is H(ClientKey).
func storedKey(h func() hash.Hash, clientKey []byte) []byte {
	return hashSum(h, clientKey)
}
