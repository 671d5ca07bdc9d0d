package mechanism

import (
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// A client makes the program's session block in Step (it waits on
// something that never comes). kproxy closes the connection at
// limits.handshake_timeout with a line saying so. The blocked Step still
// holds the goroutine running it, so the connection keeps its handshake
// slot until Step returns: limits.max_handshakes bounds how many a client
// can pile up, and kproxy serves other clients in the slots left.
func TestBlockingStepClosedAtHandshakeTimeout(t *testing.T) {
	kp := startHostile(t, "handshake_timeout: 2s, max_handshakes: 3")
	const blockers = 2
	for i := range blockers {
		c := handshake(t, kp.Bootstrap, "mechanism-blocker")
		if _, err := c.Send(authenticateRequest([]byte("block"))); err != nil {
			t.Fatalf("blocker %d: %v", i, err)
		}
		select {
		case <-kp.blocked:
		case <-time.After(30 * time.Second): // the request is on its way
			t.Fatalf("blocker %d: the session's Step was not called within 30s", i)
		}
		waitClosed(t, c, "a connection whose Step blocks")
		if cause := closedBecause(t, kp, "mechanism-blocker"); !strings.Contains(cause, "not authenticated within limits.handshake_timeout (2s)") {
			t.Errorf("blocker %d: close cause %q, want the handshake timeout", i, cause)
		}
	}
	waitHandshaking(t, kp, blockers)
	mustLogIn(t, kp.Bootstrap, "svc-orders")
}

// A client makes the program's session panic. kproxy recovers, as net/http
// recovers a handler's panic: that client gets SASL_AUTHENTICATION_FAILED
// and is closed with a line naming the panic; kproxy goes on serving.
func TestPanickingStepClosesOnlyItsConnection(t *testing.T) {
	kp := startHostile(t, "handshake_timeout: 30s")
	c := handshake(t, kp.Bootstrap, "mechanism-panic")
	resp, err := authenticate(c, []byte("panic"))
	if err != nil || resp.ErrorCode != wire.ErrCodeSASLAuthenticationFailed {
		t.Fatalf("a Step that panics: %v %+v, want SASL_AUTHENTICATION_FAILED", err, resp)
	}
	waitClosed(t, c, "a connection whose Step panicked")
	if cause := closedBecause(t, kp, "mechanism-panic"); !strings.Contains(cause, "panicked: hostile session: a client asked for it") {
		t.Errorf("close cause %q, want the panic", cause)
	}
	waitHandshaking(t, kp, 0)
	mustLogIn(t, kp.Bootstrap, "svc-orders")
}

// A client makes the program's session answer a 1 MiB challenge, or
// authenticate a 1 MiB user name: more than any token a client may send
// (512 KiB, Kafka's sasl.server.max.receive.size), which bounds the
// built-in mechanisms' messages and principals. kproxy sends neither: the
// client gets SASL_AUTHENTICATION_FAILED and is closed with a line giving
// the size; the next client is served.
func TestHugeChallengeAndUserRefused(t *testing.T) {
	kp := startHostile(t, "handshake_timeout: 30s")
	for _, tc := range []struct{ cmd, cause string }{
		{"big-challenge", "the mechanism's message of 1048576 bytes exceeds 524288"},
		{"big-user", "the mechanism authenticated a user name of 1048576 bytes, over 524288"},
	} {
		id := "mechanism-" + tc.cmd
		c := handshake(t, kp.Bootstrap, id)
		resp, err := authenticate(c, []byte(tc.cmd))
		if err != nil || resp.ErrorCode != wire.ErrCodeSASLAuthenticationFailed || len(resp.SASLAuthBytes) != 0 {
			t.Fatalf("%s: %v %s; want SASL_AUTHENTICATION_FAILED and no message", tc.cmd, err, describe(resp))
		}
		waitClosed(t, c, tc.cmd)
		if cause := closedBecause(t, kp, id); !strings.Contains(cause, tc.cause) || len(cause) > 1<<10 {
			t.Errorf("%s: close cause of %d bytes %.200q, want one line saying %q", tc.cmd, len(cause), cause, tc.cause)
		}
	}
	mustLogIn(t, kp.Bootstrap, "svc-orders")
}

// A client sends a SaslAuthenticate of 600 KiB to the program's mechanism.
// As a broker refuses a SASL receive over sasl.server.max.receive.size,
// kproxy closes the connection with a line giving the size, before reading
// the frame (so before the mechanism sees it).
func TestOversizedAuthenticateClosed(t *testing.T) {
	kp := startHostile(t, "handshake_timeout: 30s")
	c := handshake(t, kp.Bootstrap, "mechanism-oversized")
	_, err := authenticate(c, make([]byte, 600<<10))
	if err == nil || advkit.IsTimeout(err) {
		t.Fatalf("a 600 KiB SaslAuthenticate: %v, want the connection closed", err)
	}
	if cause := closedBecause(t, kp, "mechanism-oversized"); !strings.Contains(cause, "frame size 614434 > 525312") {
		t.Errorf("close cause %q, want the SASL frame bound", cause)
	}
	mustLogIn(t, kp.Bootstrap, "svc-orders")
}
