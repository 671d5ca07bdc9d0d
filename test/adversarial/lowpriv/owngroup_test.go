package lowpriv

import (
	"slices"
	"testing"

	"github.com/kproxy/kproxy/policy"
	"github.com/kproxy/kproxy/protocol"
)

// TestLowPrivOwnGroupEveryAPIKey walks every API key again, this time
// naming the group the principal may use next to the topic and
// transactional id it may not touch, so that the parts kproxy allows go
// to the cluster and the denied ones are split off. For every key: no
// answer holds anything the principal may not learn, no request reaching
// the cluster names the secret topic or transactional id, and the error
// codes are the same whether the forbidden topic (and topic id) exists or
// not, so a split answer is no existence oracle either.
func TestLowPrivOwnGroupEveryAPIKey(t *testing.T) {
	e := startLowprivEnv(t)
	secret, ghost := e.secretNames(lowprivMyGroup), ghostNames(lowprivMyGroup)
	e.walkEveryKey(t, func(t *testing.T, rule policy.APIRule, version int16) {
		name := protocol.APIName(rule.Key)
		_, mark := e.seen.since(0)
		frame, resp, err := e.send(probeRequest(rule.Key, version, secret))
		if leaks := e.leaks(frame, rule.Class == policy.ClassListing); len(leaks) > 0 {
			t.Errorf("%s answer holds %v:\n%q", name, leaks, frame)
		}
		if rule.Class == policy.ClassDenied || rule.Class == policy.ClassClosed {
			upstream, _ := e.seen.since(mark)
			for _, req := range upstream {
				if leaks := e.leaksNamed(req); slices.Contains(leaks, "topic") || slices.Contains(leaks, "transactional id") {
					t.Errorf("a request naming %v reached the cluster after the %s probe", leaks, name)
				}
			}
		}
		if rule.Class != policy.ClassDenied || err != nil {
			return // the other classes are the foreign-group walk's
		}
		_, ghostResp, err := e.send(probeRequest(rule.Key, version, ghost))
		if err != nil {
			t.Fatalf("%s naming resources that do not exist: %v", name, err)
		}
		if codes, ghostCodes := errorCodes(resp), errorCodes(ghostResp); !slices.Equal(codes, ghostCodes) {
			t.Errorf("%s tells existing resources (codes %v) from missing ones (codes %v)", name, codes, ghostCodes)
		}
	})
}
