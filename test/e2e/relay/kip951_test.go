package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestLeaderEndpointsAtEveryVersion sends Produce and Fetch requests, at
// every version kproxy lets a client negotiate, to kproxy's listener for a
// broker that does not lead the partition. The broker answers
// NOT_LEADER_OR_FOLLOWER with the leader endpoints (KIP-951) wherever its
// encoding can carry them (any flexible version: kfake, like kmsg, does
// not stop at the versions where Kafka introduced the field), and every
// endpoint the client reads must be kproxy's.
func TestLeaderEndpointsAtEveryVersion(t *testing.T) {
	t.Parallel()
	const topic = "endpoints"
	e := newEnv(t, "")
	ctx := testkit.Context(t, 30*time.Second)
	e.createTopic(ctx, topic, 1)
	leader := e.cluster.LeaderFor(topic, 0)
	other := (leader + 1) % 3
	c := dialRaw(t, mustBrokerAddr(t, e, other))
	v := c.Versions(t)

	topicID := c.MustRoundTrip(t, metadataRequest(v[int16(kmsg.Metadata)], topic)).(*kmsg.MetadataResponse).Topics[0].TopicID

	upstream := map[string]bool{}
	for _, a := range e.cluster.ListenAddrs() {
		upstream[a] = true
	}
	check := func(what string, resp kmsg.Response, errCode int16) {
		t.Helper()
		if errCode != 6 { // NOT_LEADER_OR_FOLLOWER
			t.Errorf("%s: error code %d, want 6 (not leader)", what, errCode)
		}
		for _, a := range testkit.ResponseAddrs(resp) {
			if want, ok := e.proxy.BrokerAddr(a.NodeID); upstream[a.Addr] || !ok || a.Addr != want {
				t.Errorf("%s: client was told node %d is at %s (kproxy serves it at %s)", what, a.NodeID, a.Addr, want)
			}
		}
	}

	var withEndpoints []string
	for pv := int16(3); pv <= min(v[int16(kmsg.Produce)], 12); pv++ {
		resp := c.MustRoundTrip(t, produceRequest(pv, 1, topic, 0, "x")).(*kmsg.ProduceResponse)
		what := fmt.Sprintf("Produce v%d", pv)
		check(what, resp, resp.Topics[0].Partitions[0].ErrorCode)
		if len(resp.Brokers) > 0 {
			withEndpoints = append(withEndpoints, what)
		}
	}
	for fv := int16(4); fv <= v[int16(kmsg.Fetch)]; fv++ {
		req := testkit.FetchByName(fv, topic)
		req.MaxWaitMillis, req.Topics[0].TopicID = 0, topicID // by name below v13, by id from v13
		resp := c.MustRoundTrip(t, req).(*kmsg.FetchResponse)
		what := fmt.Sprintf("Fetch v%d", fv)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Errorf("%s: unexpected response shape %+v", what, resp)
			continue
		}
		check(what, resp, resp.Topics[0].Partitions[0].ErrorCode)
		if len(resp.Brokers) > 0 {
			withEndpoints = append(withEndpoints, what)
		}
	}
	t.Logf("responses carrying leader endpoints: %v", withEndpoints)
	if len(withEndpoints) == 0 {
		t.Errorf("no response carried leader endpoints: the check is vacuous")
	}
}
