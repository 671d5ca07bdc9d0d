package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"unicode/utf8"
)

// CredentialStore looks up the SCRAM credentials sessions verify against.
//
// Lookup returns user's credential for a SCRAM mechanism and true. For a
// user it does not know, or one without a credential for that mechanism, it
// returns false and a decoy: a credential no password matches, with the
// same salt every time for that user and the usual iteration count, so that
// a caller running the same computation for it neither takes noticeably
// less time nor reveals through a changing salt that the user is unknown
// (RFC 5802 section 5.1). Implementations must be safe for concurrent use.
type CredentialStore interface {
	Lookup(user, mechanism string) (Credential, bool)
}

// User is one configured user and the text form of its credentials, at
// most one per SCRAM mechanism.
type User struct {
	Name        string
	Credentials []string
}

// Store is the CredentialStore built from configured users. It is
// immutable once built and safe for concurrent use.
type Store struct {
	creds map[string]map[string]Credential // user, then mechanism
	// decoyKey keys the decoys' salts and keys. It is random per Store, so
	// decoys are stable for the life of the process but not guessable.
	decoyKey []byte
	// decoyIterations is, per mechanism, the iteration count most real
	// credentials use, so decoys cost what a real lookup costs.
	decoyIterations map[string]int
}

// NewStore checks and indexes users. Errors name the user and the index
// of the offending credential, never its content.
func NewStore(users []User) (*Store, error) {
	s := &Store{creds: map[string]map[string]Credential{}, decoyKey: make([]byte, 32)}
	if _, err := rand.Read(s.decoyKey); err != nil {
		return nil, fmt.Errorf("credential store: decoy key: %w", err)
	}
	counts := map[string]map[int]int{} // mechanism, iterations, users
	var errs []error
	for i, u := range users {
		if err := ValidUserName(u.Name); err != nil {
			errs = append(errs, fmt.Errorf("user %d: %w", i, err))
			continue
		}
		if _, dup := s.creds[u.Name]; dup {
			errs = append(errs, fmt.Errorf("user %q: defined twice", u.Name))
			continue
		}
		if len(u.Credentials) == 0 {
			errs = append(errs, fmt.Errorf("user %q: no credentials", u.Name))
		}
		byMech := map[string]Credential{}
		for j, text := range u.Credentials {
			c, err := ParseCredential(text)
			if err != nil {
				errs = append(errs, fmt.Errorf("user %q credential %d: %w", u.Name, j, err))
				continue
			}
			if _, dup := byMech[c.Mechanism]; dup {
				errs = append(errs, fmt.Errorf("user %q credential %d: a second %s credential", u.Name, j, c.Mechanism))
				continue
			}
			byMech[c.Mechanism] = c
			if counts[c.Mechanism] == nil {
				counts[c.Mechanism] = map[int]int{}
			}
			counts[c.Mechanism][c.Iterations]++
		}
		s.creds[u.Name] = byMech
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("credential store: %w", errors.Join(errs...))
	}
	s.decoyIterations = map[string]int{}
	for _, m := range []string{ScramSHA256, ScramSHA512} {
		s.decoyIterations[m] = mostCommon(counts[m], DefaultIterations)
	}
	return s, nil
}

// ValidUserName reports why name cannot be a user name: it must be
// non-empty UTF-8 without NUL, which separates the fields of a PLAIN
// message. SCRAM's "," and "=" are fine: they travel escaped.
func ValidUserName(name string) error {
	switch {
	case name == "":
		return errors.New("empty user name")
	case !utf8.ValidString(name):
		return errors.New("user name is not valid UTF-8")
	}
	for _, r := range name {
		if r == 0 {
			return errors.New("user name contains NUL")
		}
	}
	return nil
}

// mostCommon returns the key with the highest count, the lowest such key
// on a tie (for determinism), or def for an empty map.
func mostCommon(counts map[int]int, def int) int {
	best, bestN := def, 0
	for k, n := range counts {
		if n > bestN || (n == bestN && k < best) {
			best, bestN = k, n
		}
	}
	return best
}

// Lookup implements CredentialStore.
func (s *Store) Lookup(user, mechanism string) (Credential, bool) {
	if c, ok := s.creds[user][mechanism]; ok {
		return c, true
	}
	return s.decoy(user, mechanism), false
}

// decoy derives a credential for (user, mechanism) from decoyKey. Its keys
// are pseudo-random, so no password matches it short of breaking HMAC.
func (s *Store) decoy(user, mechanism string) Credential {
	h := scramHash(mechanism)
	if h == nil {
		h = sha256.New
	}
	derive := func(label string, n int) []byte {
		mac := hmac.New(sha256.New, s.decoyKey)
		var out []byte
		for ctr := byte(0); len(out) < n; ctr++ {
			mac.Reset()
			mac.Write([]byte{ctr})
			mac.Write([]byte(label + "\x00" + mechanism + "\x00" + user))
			out = mac.Sum(out)
		}
		return out[:n]
	}
	iterations := s.decoyIterations[mechanism]
	if iterations == 0 {
		iterations = DefaultIterations
	}
	return Credential{
		Mechanism:  mechanism,
		Iterations: iterations,
		Salt:       derive("salt", saltLen),
		StoredKey:  derive("stored", h().Size()),
		ServerKey:  derive("server", h().Size()),
	}
}
