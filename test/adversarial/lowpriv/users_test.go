package lowpriv

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestLowPrivCannotTellUsersApart: the principal, knowing its own user
// exists, probes the login for other users. A wrong PLAIN password and an
// unknown user get the same answer, byte for byte; a SCRAM login of an
// unknown user gets a challenge shaped like a known user's (same iteration
// count, same salt length), the same salt each time, so the exchange says
// nothing until the proof fails. (Kafka refuses an unknown SCRAM user at
// its first message; kproxy reveals less.)
func TestLowPrivCannotTellUsersApart(t *testing.T) {
	e := startLowprivEnv(t)

	plain := func(user, password string) []byte {
		c := testkit.DialRaw(t, e.kp.Bootstrap, "lowpriv-attacker")
		e.handshake(t, c, "PLAIN")
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.SetVersion(2)
		req.SASLAuthBytes = []byte("\x00" + user + "\x00" + password)
		corr, err := c.Send(req)
		if err != nil {
			t.Fatal(err)
		}
		frame, resp, err := c.Receive(req, corr)
		if err != nil {
			t.Fatalf("PLAIN login of %s: %v", user, err)
		}
		if resp.(*kmsg.SASLAuthenticateResponse).ErrorCode == 0 {
			t.Fatalf("PLAIN login of %s with a wrong password succeeded", user)
		}
		return frame[4:] // past the correlation id
	}
	if wrong, unknown := plain(lowprivUser, "not-the-password"), plain("nobody", "not-the-password"); !bytes.Equal(wrong, unknown) {
		t.Errorf("a wrong password answers %q, an unknown user %q", wrong, unknown)
	}

	serverFirst := regexp.MustCompile(`^r=[^,]+,s=([A-Za-z0-9+/=]+),i=([0-9]+)$`)
	scramFirst := func(user string) (salt, iterations string) {
		c := testkit.DialRaw(t, e.kp.Bootstrap, "lowpriv-attacker")
		e.handshake(t, c, "SCRAM-SHA-512")
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.SetVersion(2)
		req.SASLAuthBytes = []byte("n,,n=" + user + ",r=lowprivnonce")
		resp, err := c.RoundTrip(req)
		if err != nil {
			t.Fatalf("SCRAM first message of %s: %v", user, err)
		}
		r := resp.(*kmsg.SASLAuthenticateResponse)
		m := serverFirst.FindSubmatch(r.SASLAuthBytes)
		if r.ErrorCode != 0 || m == nil {
			t.Fatalf("SCRAM first message of %s answered error %d, %q; want a challenge", user, r.ErrorCode, r.SASLAuthBytes)
		}
		return string(m[1]), string(m[2])
	}
	knownSalt, knownIter := scramFirst(lowprivUser)
	unknownSalt, unknownIter := scramFirst("nobody")
	again, _ := scramFirst("nobody")
	if unknownIter != knownIter || len(unknownSalt) != len(knownSalt) {
		t.Errorf("an unknown user's challenge (salt %s, %s iterations) is shaped unlike a known one's (salt %s, %s iterations)", unknownSalt, unknownIter, knownSalt, knownIter)
	}
	if again != unknownSalt {
		t.Errorf("an unknown user's salt changes between logins (%s, %s): a real user's does not", unknownSalt, again)
	}
}

// handshake does a SaslHandshake v1 for mechanism on c.
func (e *lowprivEnv) handshake(t *testing.T, c *testkit.RawConn, mechanism string) {
	t.Helper()
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = mechanism
	if r, err := c.RoundTrip(hs); err != nil || r.(*kmsg.SASLHandshakeResponse).ErrorCode != 0 {
		t.Fatalf("SASL handshake %s: %v %+v", mechanism, err, r)
	}
}
