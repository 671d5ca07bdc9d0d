package token

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/idp"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// claimsKproxy starts the test identity provider and the real kproxy
// binary terminating OAUTHBEARER with its JWKS in front of kfake,
// requiring the scope "kafka".
func claimsKproxy(t *testing.T) (*idp.IdP, *testkit.Binary) {
	t.Helper()
	provider := idp.StartTest(t, idp.Options{Audience: "kafka"})
	kp := advkit.Start(t, oauthConfig(advkit.Kfake(t, 1)[0],
		testkit.TerminateOAuthBearer(provider.JWKSURL(), provider.Issuer(), "required_scopes: [kafka]"), ""))
	return provider, kp
}

// TestForgedClaimNamesAreRefused: the holder of tokens signed by the
// trusted key writes claims that a case-folding, last-member-wins reader
// would take for valid ones. Kafka's OAUTHBEARER validator reads claims by
// their exact (case-sensitive, RFC 7519 section 4) names and refuses
// duplicate members, so each login fails with the invalid_token challenge
// and then SASL_AUTHENTICATION_FAILED; the valid token still logs in and
// the connection then serves requests.
func TestForgedClaimNamesAreRefused(t *testing.T) {
	provider, kp := claimsKproxy(t)
	now := time.Now()
	past, future := now.Add(-time.Hour).Unix(), now.Add(time.Hour).Unix()
	payload := func(members string) string {
		return fmt.Sprintf(`{"iss":%q,"aud":"kafka","scope":"kafka","iat":%d,%s}`, provider.Issuer(), now.Unix(), members)
	}
	good := provider.MintRaw(payload(fmt.Sprintf(`"sub":"alice","exp":%d`, future)))
	login := oauthLogin(t, kp.Bootstrap, good)
	if login.ErrorCode != 0 || login.Challenge != "" {
		t.Fatalf("the valid token: challenge %q, %v", login.Challenge, kerr.ErrorForCode(login.ErrorCode))
	}
	md := login.conn.MustRoundTrip(t, kmsg.NewPtrMetadataRequest()).(*kmsg.MetadataResponse)
	if len(md.Brokers) == 0 {
		t.Fatal("a logged-in connection got no brokers in its metadata")
	}

	for name, claims := range map[string]string{
		"expired exp, future Exp":         payload(fmt.Sprintf(`"sub":"alice","exp":%d,"Exp":%d`, past, future)),
		"EXP without exp":                 payload(fmt.Sprintf(`"sub":"alice","EXP":%d`, future)),
		"other iss, ISS the issuer":       fmt.Sprintf(`{"iss":"https://evil.example","ISS":%q,"aud":"kafka","scope":"kafka","sub":"alice","exp":%d}`, provider.Issuer(), future),
		"AUD without aud":                 fmt.Sprintf(`{"iss":%q,"AUD":"kafka","scope":"kafka","sub":"alice","exp":%d}`, provider.Issuer(), future),
		"future nbf, past Nbf":            payload(fmt.Sprintf(`"sub":"alice","exp":%d,"nbf":%d,"Nbf":%d`, future, future, past)),
		"exp twice, expired then valid":   payload(fmt.Sprintf(`"sub":"alice","exp":%d,"exp":%d`, past, future)),
		"sub twice":                       payload(fmt.Sprintf(`"sub":"alice","sub":"admin","exp":%d`, future)),
		"Sub without sub":                 payload(fmt.Sprintf(`"Sub":"admin","exp":%d`, future)),
		"groups twice":                    payload(fmt.Sprintf(`"sub":"alice","exp":%d,"groups":["dev"],"groups":["admin"]`, future)),
		"scope split on a tab":            strings.Replace(payload(fmt.Sprintf(`"sub":"alice","exp":%d`, future)), `"scope":"kafka"`, `"scope":"openid\tkafka"`, 1),
		"scope split on a no-break space": strings.Replace(payload(fmt.Sprintf(`"sub":"alice","exp":%d`, future)), `"scope":"kafka"`, `"scope":"openid\u00a0kafka"`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			got := oauthLogin(t, kp.Bootstrap, provider.MintRaw(claims))
			if got.Challenge != `{"status":"invalid_token"}` || got.ErrorCode != kerr.SaslAuthenticationFailed.Code {
				t.Fatalf("challenge %q then %v, want {\"status\":\"invalid_token\"} then SASL_AUTHENTICATION_FAILED",
					got.Challenge, kerr.ErrorForCode(got.ErrorCode))
			}
		})
	}
}
