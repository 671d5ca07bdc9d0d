package auth

import "time"

// Stats counts the token requests that succeeded and failed so far.
func (s *TokenSource) Stats() (fetched, failed uint64) { return s.fetched.Load(), s.failed.Load() }

// Expiry is when the cached token expires; zero before the first token.
func (s *TokenSource) Expiry() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.expiry
}
