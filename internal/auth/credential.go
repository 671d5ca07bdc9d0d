package auth

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Iteration bounds for SCRAM credentials. They are Kafka's broker limits, so
// every Kafka client accepts a credential kproxy accepts (RFC 7677 asks for
// at least 4096; franz-go and the Java client refuse fewer).
const (
	MinIterations     = 4096
	MaxIterations     = 16384
	DefaultIterations = 8192
)

// saltLen is the salt size HashPassword generates.
const saltLen = 16

// minSaltLen rejects salts too short to make precomputation useless.
const minSaltLen = 8

// ErrNotCredential: a string is not in the credential format. Its message
// never repeats the string, which is secret-equivalent.
var ErrNotCredential = errors.New("not a SCRAM credential")

// Credential is one salted SCRAM credential of a user (RFC 5802 section
// 3): what a server stores instead of the password. Its text form is
//
//	MECHANISM:ITERATIONS:SALT:STOREDKEY:SERVERKEY
//
// with the three byte strings in padded standard base64, for example
// "SCRAM-SHA-512:8192:c2FsdA==:...:...". StoredKey and ServerKey are
// secret-equivalent: StoredKey allows an offline dictionary attack on the
// password and ServerKey allows impersonating the server.
type Credential struct {
	Mechanism  string // ScramSHA256 or ScramSHA512
	Iterations int
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
}

// String encodes c in the text form ParseCredential reads.
func (c Credential) String() string {
	enc := base64.StdEncoding.EncodeToString
	return strings.Join([]string{c.Mechanism, strconv.Itoa(c.Iterations), enc(c.Salt), enc(c.StoredKey), enc(c.ServerKey)}, ":")
}

// ParseCredential reads the text form described at Credential. Errors wrap
// ErrNotCredential and say which part is wrong, never what it holds.
func ParseCredential(s string) (Credential, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 5 {
		return Credential{}, fmt.Errorf("%w: want 5 colon-separated fields (MECHANISM:ITERATIONS:SALT:STOREDKEY:SERVERKEY), got %d", ErrNotCredential, len(parts))
	}
	c := Credential{Mechanism: parts[0]}
	h := scramHash(c.Mechanism)
	if h == nil {
		return Credential{}, fmt.Errorf("%w: mechanism must be %s or %s", ErrNotCredential, ScramSHA256, ScramSHA512)
	}
	it, err := strconv.Atoi(parts[1])
	if err != nil {
		return Credential{}, fmt.Errorf("%w: iterations is not a number", ErrNotCredential)
	}
	if it < MinIterations || it > MaxIterations {
		return Credential{}, fmt.Errorf("%w: iterations %d outside [%d, %d]", ErrNotCredential, it, MinIterations, MaxIterations)
	}
	c.Iterations = it
	fields := []struct {
		name string
		dst  *[]byte
		size int // 0: any size of at least minSaltLen
	}{
		{"salt", &c.Salt, 0},
		{"stored key", &c.StoredKey, h().Size()},
		{"server key", &c.ServerKey, h().Size()},
	}
	for i, f := range fields {
		b, err := decodeBase64(parts[2+i])
		if err != nil {
			return Credential{}, fmt.Errorf("%w: %s is not padded standard base64", ErrNotCredential, f.name)
		}
		switch {
		case f.size == 0 && len(b) < minSaltLen:
			return Credential{}, fmt.Errorf("%w: %s is %d bytes, want at least %d", ErrNotCredential, f.name, len(b), minSaltLen)
		case f.size != 0 && len(b) != f.size:
			return Credential{}, fmt.Errorf("%w: %s is %d bytes, want %d for %s", ErrNotCredential, f.name, len(b), f.size, c.Mechanism)
		}
		*f.dst = b
	}
	return c, nil
}

// DeriveCredential computes the credential for password with the given
// salt and iteration count. The iteration count is not bounds-checked here,
// so that verification can use whatever a parsed credential holds.
func DeriveCredential(mechanism, password string, salt []byte, iterations int) (Credential, error) {
	h := scramHash(mechanism)
	if h == nil {
		return Credential{}, fmt.Errorf("derive credential: %w %q", ErrUnsupportedMechanism, mechanism)
	}
	salted, err := saltedPassword(h, password, salt, iterations)
	if err != nil {
		return Credential{}, fmt.Errorf("derive %s credential: %w", mechanism, err)
	}
	return Credential{
		Mechanism:  mechanism,
		Iterations: iterations,
		Salt:       salt,
		StoredKey:  storedKey(h, clientKey(h, salted)),
		ServerKey:  serverKey(h, salted),
	}, nil
}

// HashPassword returns the text form of a new credential for password, with
// a random salt. iterations 0 means DefaultIterations. The password must be
// non-empty.
func HashPassword(mechanism, password string, iterations int) (string, error) {
	if scramHash(mechanism) == nil {
		return "", fmt.Errorf("hash password: %w %q (want %s or %s)", ErrUnsupportedMechanism, mechanism, ScramSHA256, ScramSHA512)
	}
	if password == "" {
		return "", errors.New("hash password: the password is empty")
	}
	if iterations == 0 {
		iterations = DefaultIterations
	}
	if iterations < MinIterations || iterations > MaxIterations {
		return "", fmt.Errorf("hash password: iterations %d outside [%d, %d]", iterations, MinIterations, MaxIterations)
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("hash password: salt: %w", err)
	}
	c, err := DeriveCredential(mechanism, password, salt, iterations)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return c.String(), nil
}
