package token

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// TestUpstreamTokenLifetimeFromExpiresInAndExp: the token endpoint kproxy
// logs in with answers an expires_in that contradicts its JWT's exp. kproxy
// keeps a token until the earlier of the two: a huge expires_in does not
// keep a token past its exp (the expiry kproxy reports is the exp's), and
// a negative or zero one does not make every connection ask for a new
// token (many client connections, each logging in upstream, cost one token
// request).
func TestUpstreamTokenLifetimeFromExpiresInAndExp(t *testing.T) {
	const lifetime = 10 * time.Minute
	for _, expiresIn := range []int64{math.MaxInt32, 0, -3600} {
		t.Run(fmt.Sprint("expires_in ", expiresIn), func(t *testing.T) {
			p := upstreamTokenIdP(t, lifetime)
			p.SetExpiresIn(expiresIn)
			kp := advkit.Start(t, upstreamTokenConfig(upstreamTokenBroker(t, p), p))
			const connections = 8
			for i := range connections {
				c := testkit.DialRaw(t, kp.Bootstrap, fmt.Sprint("client-", i))
				md := c.MustRoundTrip(t, kmsg.NewPtrMetadataRequest()).(*kmsg.MetadataResponse)
				if len(md.Brokers) == 0 {
					t.Fatalf("connection %d: no brokers: the upstream login failed", i)
				}
				c.Close()
			}
			if n := p.TokenRequests(); n != 1 {
				t.Errorf("%d token requests for %d client connections (and kproxy's own), want 1", n, connections)
			}
			expiry := time.Unix(int64(testkit.ScrapeMetric(t, kp.Admin, "kproxy_upstream_oauth_token_expiry_timestamp_seconds")), 0)
			if latest := time.Now().Add(lifetime); expiry.After(latest) {
				t.Errorf("kproxy keeps its token until %s, after the token's exp (at most %s)", expiry.UTC(), latest.UTC())
			}
		})
	}
}
