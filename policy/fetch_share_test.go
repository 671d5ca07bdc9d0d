package policy

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const sharePolicy = `
policy:
  rules:
    - {name: share, principals: ["*"], allow: [read], groups: ["g"], topics: ["pub.*"]}
`

var (
	pubID    = [16]byte{1}
	secretID = [16]byte{2}
	unseenID = [16]byte{3}
)

// shareFetchReq is an incremental ShareFetch of group g naming topics.
func shareFetchReq(topics ...[16]byte) *kmsg.ShareFetchRequest {
	r := kmsg.NewPtrShareFetchRequest()
	r.SetVersion(1)
	g, m := "g", "member-of-someone-else"
	r.GroupID, r.MemberID, r.ShareSessionEpoch = &g, &m, 3
	for _, id := range topics {
		t := kmsg.NewShareFetchRequestTopic()
		t.TopicID = id
		t.Partitions = []kmsg.ShareFetchRequestTopicPartition{kmsg.NewShareFetchRequestTopicPartition()}
		r.Topics = append(r.Topics, t)
	}
	return r
}

// shareFetchResp is a broker's answer carrying records of each topic.
func shareFetchResp(r *kmsg.ShareFetchRequest, topics ...[16]byte) *kmsg.ShareFetchResponse {
	resp := r.ResponseKind().(*kmsg.ShareFetchResponse)
	for _, id := range topics {
		t := kmsg.NewShareFetchResponseTopic()
		t.TopicID = id
		p := kmsg.NewShareFetchResponseTopicPartition()
		p.Records = []byte("records of the session")
		t.Partitions = append(t.Partitions, p)
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// TestShareFetchSessionTopicsAreDecided: an incremental ShareFetch names
// only what it adds, and the broker returns records of every partition of
// the member's share session, whoever sent it. A response carrying a topic
// the request did not name and the principal may not read (or whose id
// kproxy cannot name) is replaced by SHARE_SESSION_NOT_FOUND with no
// records; one whose unnamed topics are all readable passes unchanged; in
// audit mode nothing is changed.
func TestShareFetchSessionTopicsAreDecided(t *testing.T) {
	enf := newTestEnforcer(t, sharePolicy, nil)
	enf.ids.learn(pubID, "pub.a")
	enf.ids.learn(secretID, "secret")
	for _, tc := range []struct {
		name      string
		named     [][16]byte
		delivered [][16]byte
		refused   bool
	}{
		{"hijack: nothing named, secret delivered", nil, [][16]byte{secretID}, true},
		{"readable topic named, secret delivered too", [][16]byte{pubID}, [][16]byte{pubID, secretID}, true},
		{"unseen topic id delivered", nil, [][16]byte{unseenID}, true},
		{"only readable topics delivered", nil, [][16]byte{pubID}, false},
	} {
		req := shareFetchReq(tc.named...)
		v := filterRequest(enf, testConn, req)
		if v.Respond != nil || v.Close != nil || v.OnResponse == nil {
			t.Fatalf("%s: verdict %+v, want forwarded with a response check", tc.name, v)
		}
		resp := shareFetchResp(req, tc.delivered...)
		applyResponse(t, v, resp)
		refused := resp.ErrorCode == kerr.ShareSessionNotFound.Code
		if refused != tc.refused {
			t.Errorf("%s: code %d, refused %v, want refused %v", tc.name, resp.ErrorCode, refused, tc.refused)
		}
		if refused && len(resp.Topics) != 0 {
			t.Errorf("%s: refused answer still carries %d topics", tc.name, len(resp.Topics))
		}
		if !refused && len(resp.Topics) != len(tc.delivered) {
			t.Errorf("%s: allowed answer lost topics: %d of %d", tc.name, len(resp.Topics), len(tc.delivered))
		}
	}

	audit := newTestEnforcer(t, sharePolicy+"  mode: audit\n", nil)
	audit.ids.learn(secretID, "secret")
	req := shareFetchReq()
	v := filterRequest(audit, testConn, req)
	resp := shareFetchResp(req, secretID)
	applyResponse(t, v, resp)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 {
		t.Errorf("audit mode changed the answer: code %d, %d topics", resp.ErrorCode, len(resp.Topics))
	}
}
