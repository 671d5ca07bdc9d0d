package auth

import (
	"crypto/sha256"
	"crypto/sha512"
	"hash"
)

// SASL mechanism names, spelled as Kafka spells them (case matters).
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
)

// KnownMechanism reports whether name is a password mechanism this package
// implements, as a server and as kproxy's upstream client.
func KnownMechanism(name string) bool {
	return name == Plain || IsScram(name)
}

// KnownServerMechanism reports whether name is a mechanism kproxy can
// terminate: the password mechanisms and OAUTHBEARER.
func KnownServerMechanism(name string) bool {
	return KnownMechanism(name) || name == OAuthBearer
}

// IsScram reports whether name is one of the SCRAM mechanisms.
func IsScram(name string) bool { return name == ScramSHA256 || name == ScramSHA512 }

// scramHash is the hash function of a SCRAM mechanism, or nil.
func scramHash(mechanism string) func() hash.Hash {
	switch mechanism {
	case ScramSHA256:
		return sha256.New
	case ScramSHA512:
		return sha512.New
	}
	return nil
}
