package auth

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"unicode/utf8"
)

// plainMessage is a parsed PLAIN message (RFC 4616): authzid NUL authcid
// NUL passwd.
type plainMessage struct {
	AuthzID  string
	User     string // authcid
	Password string
}

// errPlainMalformed is the cause of every PLAIN parse failure; the error
// says which field, never its content, since the message holds a password.
var errPlainMalformed = errors.New("malformed PLAIN message")

// maxPlainField is RFC 4616's limit on each field.
const maxPlainField = 255

// parsePlain splits a PLAIN message. Fields must be UTF-8, user and
// password non-empty, none longer than 255 bytes.
func parsePlain(msg []byte) (plainMessage, error) {
	fields := bytes.Split(msg, []byte{0})
	if len(fields) != 3 {
		return plainMessage{}, fmt.Errorf("%w: want 3 NUL-separated fields, got %d", errPlainMalformed, len(fields))
	}
	for i, name := range []string{"authzid", "user", "password"} {
		f := fields[i]
		switch {
		case len(f) > maxPlainField:
			return plainMessage{}, fmt.Errorf("%w: %s longer than %d bytes", errPlainMalformed, name, maxPlainField)
		case !utf8.Valid(f):
			return plainMessage{}, fmt.Errorf("%w: %s is not UTF-8", errPlainMalformed, name)
		case i > 0 && len(f) == 0:
			return plainMessage{}, fmt.Errorf("%w: empty %s", errPlainMalformed, name)
		}
	}
	return plainMessage{AuthzID: string(fields[0]), User: string(fields[1]), Password: string(fields[2])}, nil
}

// plainServer verifies a PLAIN message against the salted credentials of
// the user, so that no plaintext password is stored anywhere: it derives
// the StoredKey from the given password with the stored salt and iteration
// count and compares in constant time. That costs one PBKDF2 per login.
type plainServer struct {
	store CredentialStore
	user  string
	ended bool
}

func (s *plainServer) Mechanism() string { return Plain }
func (s *plainServer) User() string      { return s.user }

func (s *plainServer) Step(msg []byte) ([]byte, bool, error) {
	if s.ended {
		return nil, false, fmt.Errorf("PLAIN: %w: the exchange has ended", ErrIllegalState)
	}
	s.ended = true
	m, err := parsePlain(msg)
	if err != nil {
		return nil, false, failed(Plain, "", err.Error())
	}
	// Kafka only lets a client act for itself.
	if m.AuthzID != "" && m.AuthzID != m.User {
		return nil, false, failed(Plain, m.User, "authorization id differs from the user")
	}
	cred, known := s.lookup(m.User)
	// Verify even for an unknown user (against the decoy), so that both
	// take one PBKDF2.
	ok, err := verifyPassword(cred, m.Password)
	if err != nil {
		return nil, false, fmt.Errorf("PLAIN for user %q: %w", m.User, err)
	}
	switch {
	case !known:
		return nil, false, failed(Plain, m.User, "unknown user")
	case !ok:
		return nil, false, failed(Plain, m.User, "wrong password")
	}
	s.user = m.User
	return []byte{}, true, nil
}

// lookup prefers the stronger credential.
func (s *plainServer) lookup(user string) (Credential, bool) {
	for _, m := range []string{ScramSHA512, ScramSHA256} {
		if c, ok := s.store.Lookup(user, m); ok {
			return c, true
		}
	}
	return s.store.Lookup(user, ScramSHA512)
}

// verifyPassword reports whether password derives cred's StoredKey.
func verifyPassword(cred Credential, password string) (bool, error) {
	derived, err := DeriveCredential(cred.Mechanism, password, cred.Salt, cred.Iterations)
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(derived.StoredKey, cred.StoredKey) == 1, nil
}
