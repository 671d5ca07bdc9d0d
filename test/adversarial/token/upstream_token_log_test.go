package token

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestUpstreamTokenEndpointEchoNeverLogsSecret: the token endpoint kproxy
// logs in with refuses every request with a body that echoes the request,
// the client secret included (in the form, and in the Authorization
// header). kproxy logs the failure with the HTTP status (RFC 6749 section
// 5.2's error and error_description, when the endpoint gives them), and
// nothing kproxy writes, to stdout or stderr, holds the secret.
func TestUpstreamTokenEndpointEchoNeverLogsSecret(t *testing.T) {
	p := upstreamTokenIdP(t, 0)
	upstream := upstreamTokenBroker(t, p)
	p.EchoTokenRequests()
	kp := startCapturedKproxy(t, upstreamTokenConfig(upstream, p))

	// A client's connection makes kproxy log in upstream, asking for a
	// token; the answer to the client does not matter here.
	c := testkit.DialRaw(t, kp.Bootstrap, "victim")
	_, _ = c.RoundTrip(kmsg.NewPtrMetadataRequest())
	failure := kp.waitOutput(t, "the failed token request", func(l testkit.LogLine) bool {
		return strings.HasPrefix(l.Message(), "upstream OAuth token request failed")
	})
	if msg, _ := failure["error"].(string); !strings.Contains(msg, "HTTP status 400") {
		t.Errorf("the failure's error %q does not give the HTTP status", msg)
	}
	if p.TokenRequests() == 0 {
		t.Fatal("the token endpoint saw no request: nothing was echoed")
	}
	kp.stop(t)
	basic := base64.StdEncoding.EncodeToString([]byte("kproxy:" + upstreamTokenClientSecret))
	out := kp.Output.String()
	for _, secret := range []string{upstreamTokenClientSecret, basic} {
		if i := strings.Index(out, secret); i >= 0 {
			t.Fatalf("kproxy's output holds the client secret: ...%s...", out[max(0, i-200):min(len(out), i+len(secret)+50)])
		}
	}
}
