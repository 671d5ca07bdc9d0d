package mechanism

import (
	"strings"
	"testing"
)

// A client starts the program's mechanism, gets its first challenge and
// never sends the next message. As a broker bounds an exchange
// (connections.max.reauth.ms aside, its idle close), kproxy closes it at
// limits.handshake_timeout with a line saying so, frees its handshake
// slot, and serves a client that logs in meanwhile.
func TestStalledExchangeClosedAtHandshakeTimeout(t *testing.T) {
	kp := startHostile(t, "handshake_timeout: 2s, max_handshakes: 2")
	stalled := handshake(t, kp.Bootstrap, "mechanism-stalled")
	if resp, err := authenticate(stalled, []byte("more")); err != nil || resp.ErrorCode != 0 || string(resp.SASLAuthBytes) != "go on" {
		t.Fatalf("the first step: %v %+v, want the challenge", err, resp)
	}
	mustLogIn(t, kp.Bootstrap, "svc-a")

	waitClosed(t, stalled, "a client stalled in its exchange")
	if cause := closedBecause(t, kp, "mechanism-stalled"); !strings.Contains(cause, "not authenticated within limits.handshake_timeout (2s)") {
		t.Errorf("close cause %q, want the handshake timeout", cause)
	}
	waitHandshaking(t, kp, 0)
	mustLogIn(t, kp.Bootstrap, "svc-b")
}
