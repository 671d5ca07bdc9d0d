package engine

import (
	"testing"
	"time"
)

// TestReauthAfter: kproxy re-authenticates at 80% of a long lifetime, at
// least a second before a short one ends, never in the first half, and no
// sooner than 1.5s after the login began (a broker refuses re-authentications
// less than a second apart) unless that leaves under a tenth of the lifetime.
func TestReauthAfter(t *testing.T) {
	for _, tc := range []struct{ lifetime, want time.Duration }{
		{time.Hour, 48 * time.Minute},
		{10 * time.Second, 8 * time.Second},
		{3 * time.Second, 2 * time.Second},
		{2 * time.Second, 1500 * time.Millisecond},
		{time.Second, 900 * time.Millisecond},
	} {
		if got := reauthAfter(tc.lifetime); got != tc.want {
			t.Errorf("lifetime %s: re-authenticate after %s, want %s", tc.lifetime, got, tc.want)
		}
	}
}
