package engine_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// sessionFetch is a Fetch at version of partition 0 of topic (by name
// before v13, else by id) with session id and epoch; no topics when topic
// is empty (an incremental fetch that changes nothing).
func sessionFetch(version int16, topic string, id [16]byte, sessionID, epoch int32) *kmsg.FetchRequest {
	var req *kmsg.FetchRequest
	switch {
	case topic == "":
		req = testkit.FetchByName(version)
	case version >= 13:
		req = testkit.FetchByID(version, id)
	default:
		req = testkit.FetchByName(version, topic)
	}
	req.SessionID, req.SessionEpoch = sessionID, epoch
	return req
}

// sessionTopicID is topic's id as the cluster at addr tells it.
func sessionTopicID(t *testing.T, addr, topic string) [16]byte {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp := testkit.DialRaw(t, addr, "meta").MustRoundTrip(t, req).(*kmsg.MetadataResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("metadata of %s: %+v", topic, resp.Topics)
	}
	return resp.Topics[0].TopicID
}

// fetchAnswer sends req on c and returns the response and its frame with
// the correlation id zeroed, for byte comparisons across connections.
func fetchAnswer(t *testing.T, c *testkit.RawConn, req *kmsg.FetchRequest) ([]byte, *kmsg.FetchResponse) {
	t.Helper()
	frame, resp := c.MustExchange(t, req)
	return testkit.WithoutCorrelation(frame), resp.(*kmsg.FetchResponse)
}

// A fetch session is its connection's: another connection to the same
// broker naming its id at an incremental epoch gets exactly the broker's
// answer to an unknown id (not the session's records, not
// INVALID_FETCH_SESSION_EPOCH), and naming it in a full fetch (epoch 0 or
// -1) does not close it. The owner's session keeps working throughout.
func TestFetchSessionIsItsConnectionsOnly(t *testing.T) {
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "victim"))
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(testkit.Context(t, 10e9), &kgo.Record{Topic: "victim", Value: []byte("secret")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	topicID := sessionTopicID(t, cluster.ListenAddrs()[0], "victim")
	p := testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: cluster.ListenAddrs()}.YAML()})
	addr, _ := p.BrokerAddr(0)
	// The broker's own answer to an id it does not know, for comparison.
	direct := testkit.DialRaw(t, cluster.ListenAddrs()[0], "direct")

	for _, v := range []int16{7, 12, 13, 15, protocol.MaxVersion(wire.FetchKey)} {
		owner := testkit.DialRaw(t, addr, "owner")
		_, opened := fetchAnswer(t, owner, sessionFetch(v, "victim", topicID, 0, 0))
		if opened.ErrorCode != 0 || opened.SessionID == 0 || len(opened.Topics) != 1 {
			t.Fatalf("v%d: owner's session not opened: %v, session %d, %d topics", v, kerr.ErrorForCode(opened.ErrorCode), opened.SessionID, len(opened.Topics))
		}
		s := opened.SessionID
		unknown, _ := fetchAnswer(t, direct, sessionFetch(v, "", topicID, s+100000, 1))

		attacker := testkit.DialRaw(t, addr, "attacker")
		for epoch := int32(1); epoch <= 3; epoch++ {
			frame, resp := fetchAnswer(t, attacker, sessionFetch(v, "", topicID, s, epoch))
			if resp.ErrorCode != kerr.FetchSessionIDNotFound.Code || resp.SessionID != 0 || len(resp.Topics) != 0 {
				t.Fatalf("v%d: another connection naming session %d at epoch %d got %v, session %d, %d topics; want FETCH_SESSION_ID_NOT_FOUND, session 0, none",
					v, s, epoch, kerr.ErrorForCode(resp.ErrorCode), resp.SessionID, len(resp.Topics))
			}
			if !bytes.Equal(frame, unknown) {
				t.Fatalf("v%d epoch %d: answer %x differs from the broker's to an unknown id %x", v, epoch, frame, unknown)
			}
		}

		epoch := int32(1)
		incremental := func(when string) {
			t.Helper()
			_, resp := fetchAnswer(t, owner, sessionFetch(v, "", topicID, s, epoch))
			if resp.ErrorCode != 0 || resp.SessionID != s {
				t.Fatalf("v%d: owner's incremental fetch %s: %v, session %d; want its session %d working", v, when, kerr.ErrorForCode(resp.ErrorCode), resp.SessionID, s)
			}
			epoch++
		}
		incremental("after the hijack attempts")
		for _, full := range []int32{0, -1} {
			_, resp := fetchAnswer(t, attacker, sessionFetch(v, "victim", topicID, s, full))
			if resp.ErrorCode != 0 || resp.SessionID == s {
				t.Fatalf("v%d: another connection's full fetch (epoch %d) naming session %d: %v, session %d", v, full, s, kerr.ErrorForCode(resp.ErrorCode), resp.SessionID)
			}
			incremental(fmt.Sprintf("after another connection's full fetch at epoch %d", full))
		}
		// The owner's own close works as it always did.
		if _, resp := fetchAnswer(t, owner, sessionFetch(v, "victim", topicID, s, -1)); resp.ErrorCode != 0 || resp.SessionID != 0 {
			t.Fatalf("v%d: owner's close: %v, session %d", v, kerr.ErrorForCode(resp.ErrorCode), resp.SessionID)
		}
		if _, resp := fetchAnswer(t, owner, sessionFetch(v, "", topicID, s, epoch)); resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
			t.Fatalf("v%d: owner's session after it closed it: %v; want FETCH_SESSION_ID_NOT_FOUND", v, kerr.ErrorForCode(resp.ErrorCode))
		}
	}
}
