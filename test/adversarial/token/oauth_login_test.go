package token

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// oauthLoginOutcome is what kproxy answered one OAUTHBEARER login.
type oauthLoginOutcome struct {
	// Challenge is the server's error challenge (RFC 7628 section 3.2.2),
	// empty when the token was accepted.
	Challenge string
	// ErrorCode is the final SaslAuthenticate error code: 0 when logged
	// in, SASL_AUTHENTICATION_FAILED after a challenge.
	ErrorCode int16
	conn      *testkit.RawConn
}

// oauthLogin logs in to addr with token as a Kafka client does, by hand:
// SaslHandshake v1 OAUTHBEARER, then SaslAuthenticate v2 with the
// client-first message and, after an error challenge, the %x01 reply.
func oauthLogin(t *testing.T, addr, token string) oauthLoginOutcome {
	t.Helper()
	c := testkit.DialRaw(t, addr, "token-attacker")
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = "OAUTHBEARER"
	if resp := c.MustRoundTrip(t, hs).(*kmsg.SASLHandshakeResponse); resp.ErrorCode != 0 {
		t.Fatalf("SaslHandshake OAUTHBEARER: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	first := kmsg.NewPtrSASLAuthenticateRequest()
	first.SetVersion(2)
	first.SASLAuthBytes = []byte("n,,\x01auth=Bearer " + token + "\x01\x01")
	resp := c.MustRoundTrip(t, first).(*kmsg.SASLAuthenticateResponse)
	out := oauthLoginOutcome{ErrorCode: resp.ErrorCode, conn: c}
	if resp.ErrorCode != 0 || len(resp.SASLAuthBytes) == 0 {
		return out
	}
	out.Challenge = string(resp.SASLAuthBytes)
	ack := kmsg.NewPtrSASLAuthenticateRequest()
	ack.SetVersion(2)
	ack.SASLAuthBytes = []byte{0x01}
	out.ErrorCode = c.MustRoundTrip(t, ack).(*kmsg.SASLAuthenticateResponse).ErrorCode
	return out
}
