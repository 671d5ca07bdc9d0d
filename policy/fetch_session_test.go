package policy

import (
	"io"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const readPolicy = `
policy:
  rules:
    - {name: readers, principals: ["*"], allow: [read], topics: ["pub.*"]}
`

// fetchReq is a consumer Fetch at version with the given session and
// topics (one partition each).
func fetchReq(version int16, sessionID, epoch int32, topics ...string) *kmsg.FetchRequest {
	r := kmsg.NewPtrFetchRequest()
	r.SetVersion(version)
	r.ReplicaID = -1
	r.SessionID, r.SessionEpoch = sessionID, epoch
	for _, name := range topics {
		t := kmsg.NewFetchRequestTopic()
		t.Topic = name
		p := kmsg.NewFetchRequestTopicPartition()
		t.Partitions = append(t.Partitions, p)
		r.Topics = append(r.Topics, t)
	}
	return r
}

// TestFetchNamingASessionIsRefused: an incremental fetch lists only what
// changed, and the broker serves the rest of the session unnamed. Under a
// policy no such fetch reaches the broker, whoever's session it names and
// whatever it lists: the answer is FETCH_SESSION_ID_NOT_FOUND at top level
// with nothing else, as a broker answers a session it does not know.
func TestFetchNamingASessionIsRefused(t *testing.T) {
	for _, mode := range []string{"enforce", "audit"} {
		enf := newTestEnforcer(t, readPolicy+"  mode: "+mode+"\n", nil)
		for _, tc := range []struct {
			name      string
			id, epoch int32
			topics    []string
		}{
			{"hijack: another session, no topics", 1, 1, nil},
			{"own session, allowed topic added", 2, 5, []string{"pub.a"}},
			{"no session id, incremental epoch", 0, 3, nil},
			{"invalid epoch", 3, -2, nil},
		} {
			req := fetchReq(12, tc.id, tc.epoch, tc.topics...)
			v := filterRequest(enf, testConn, req)
			resp, ok := v.Respond.(*kmsg.FetchResponse)
			if !ok || v.Modified || v.OnResponse != nil {
				t.Fatalf("%s, %s: verdict %+v, want a local answer", mode, tc.name, v)
			}
			if resp.ErrorCode != kerr.FetchSessionIDNotFound.Code || resp.SessionID != 0 || len(resp.Topics) != 0 {
				t.Errorf("%s, %s: answered code %d session %d topics %d, want 70, 0, none",
					mode, tc.name, resp.ErrorCode, resp.SessionID, len(resp.Topics))
			}
			if resp.GetVersion() != 12 {
				t.Errorf("%s, %s: answered at v%d", mode, tc.name, resp.GetVersion())
			}
		}
	}
}

// TestFullFetchIsForwardedSessionless: a full fetch goes upstream as a
// sessionless one (id 0, epoch -1), so the broker opens no session that a
// later fetch could use without naming its partitions; one that names a
// session id would close that session on the broker, and does not.
func TestFullFetchIsForwardedSessionless(t *testing.T) {
	enf := newTestEnforcer(t, readPolicy, nil)
	for _, tc := range []struct {
		name      string
		id, epoch int32
		modified  bool
	}{
		{"new session", 0, 0, true},
		{"reset of a session", 9, 0, true},
		{"close of a session", 9, -1, true},
		{"already sessionless", 0, -1, false},
	} {
		req := fetchReq(12, tc.id, tc.epoch, "pub.a", "pub.b")
		v := filterRequest(enf, testConn, req)
		if v.Respond != nil || v.Close != nil || v.OnResponse != nil || v.Modified != tc.modified {
			t.Fatalf("%s: verdict %+v, want forwarded (modified %v)", tc.name, v, tc.modified)
		}
		if req.SessionID != 0 || req.SessionEpoch != -1 || len(req.Topics) != 2 {
			t.Errorf("%s: forwarded session %d epoch %d with %d topics, want 0, -1, 2", tc.name, req.SessionID, req.SessionEpoch, len(req.Topics))
		}
	}
	// Before v7 there are no sessions and nothing to rewrite.
	old := fetchReq(6, 0, 0, "pub.a")
	if v := filterRequest(enf, testConn, old); v.Modified || v.Respond != nil {
		t.Errorf("v6 fetch: verdict %+v, want forwarded unchanged", v)
	}
}

// TestSessionlessFetchStillSplits: a partly denied full fetch is forwarded
// sessionless with only its allowed topics, and the denied ones are
// answered 29 in the client's order.
func TestSessionlessFetchStillSplits(t *testing.T) {
	enf := newTestEnforcer(t, readPolicy, nil)
	req := fetchReq(12, 4, 0, "pub.a", "secret", "pub.b")
	req.ForgottenTopics = []kmsg.FetchRequestForgottenTopic{{Topic: "secret", Partitions: []int32{1}}}
	v := filterRequest(enf, testConn, req)
	if !v.Modified || v.OnResponse == nil || v.Respond != nil {
		t.Fatalf("verdict %+v, want a split", v)
	}
	if req.SessionID != 0 || req.SessionEpoch != -1 {
		t.Errorf("split forwarded session %d epoch %d, want 0, -1", req.SessionID, req.SessionEpoch)
	}
	if len(req.Topics) != 2 || req.Topics[0].Topic != "pub.a" || req.Topics[1].Topic != "pub.b" {
		t.Fatalf("forwarded topics %+v", req.Topics)
	}
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	for _, name := range []string{"pub.b", "pub.a"} {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = name
		rt.Partitions = []kmsg.FetchResponseTopicPartition{kmsg.NewFetchResponseTopicPartition()}
		resp.Topics = append(resp.Topics, rt)
	}
	applyResponse(t, v, resp)
	var got []string
	for _, rt := range resp.Topics {
		got = append(got, rt.Topic+"="+itoa(int(rt.Partitions[0].ErrorCode)))
	}
	if want := "pub.a=0 secret=29 pub.b=0"; strings.Join(got, " ") != want {
		t.Errorf("merged %q, want %q", strings.Join(got, " "), want)
	}
}

// TestSessionAfterReloadIsRefused: a session opened while a topic was
// allowed (here: before the policy denied it, and under audit mode) cannot
// be continued once it is denied; the full fetch the client then sends is
// decided afresh.
func TestSessionAfterReloadIsRefused(t *testing.T) {
	for _, from := range []string{"policy: {default: allow}\n", readPolicy + "  mode: audit\n"} {
		enf := newTestEnforcer(t, from, nil)
		if v := filterRequest(enf, testConn, fetchReq(12, 0, 0, "secret")); v.Respond != nil {
			t.Fatalf("before the reload, the full fetch was answered locally: %+v", v)
		}
		if err := enf.Reload(parsePolicy(t, readPolicy).Policy, nil); err != nil {
			t.Fatal(err)
		}
		v := filterRequest(enf, testConn, fetchReq(12, 1, 1))
		if resp, ok := v.Respond.(*kmsg.FetchResponse); !ok || resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
			t.Fatalf("after the reload, incremental fetch verdict %+v, want FETCH_SESSION_ID_NOT_FOUND", v)
		}
		v = filterRequest(enf, testConn, fetchReq(12, 0, 0, "secret"))
		resp, ok := v.Respond.(*kmsg.FetchResponse)
		if !ok || len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != errTopicAuthorizationFailed || resp.SessionID != 0 {
			t.Fatalf("after the reload, full fetch verdict %+v, want 29 without a session", v)
		}
	}
}

// TestSessionFromBeforeAnyPolicyIsRefused: with no policy fetches pass
// untouched and the broker opens sessions; once a policy is loaded, such a
// session's next fetch is refused, so the full fetch after it is decided.
func TestSessionFromBeforeAnyPolicyIsRefused(t *testing.T) {
	enf, err := New(nil, nil, WithAuditWriter(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer enf.Close()
	open := fetchReq(12, 0, 0, "secret")
	if v := filterRequest(enf, testConn, open); v.Modified || v.Respond != nil || open.SessionEpoch != 0 {
		t.Fatalf("without a policy the fetch was changed: %+v", v)
	}
	if err := enf.Reload(parsePolicy(t, readPolicy).Policy, nil); err != nil {
		t.Fatal(err)
	}
	v := filterRequest(enf, testConn, fetchReq(12, 1, 1))
	if resp, ok := v.Respond.(*kmsg.FetchResponse); !ok || resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("session from before the policy: verdict %+v, want FETCH_SESSION_ID_NOT_FOUND", v)
	}
}
